import { mapLimited } from '../../lambda/packing/limited';

describe('mapLimited', () => {
  test('keeps at most `limit` calls in flight and returns the results in item order', async () => {
    // GIVEN calls that finish in reverse order of their start
    let inFlight = 0;
    let most = 0;
    const items = Array.from({ length: 20 }, (_, i) => i);

    // WHEN
    const results = await mapLimited(items, 3, async (item) => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 20 - item));
      inFlight--;
      return item * 2;
    });

    // THEN
    expect(most).toBe(3);
    expect(results).toEqual(items.map((item) => item * 2));
  });

  test('after a failure no item starts; it rejects with that failure once the call in flight is done', async () => {
    // GIVEN item 1 fails at once while item 0 is still in flight
    const started: number[] = [];
    const finished: number[] = [];
    const run = mapLimited([0, 1, 2, 3, 4, 5], 2, async (item) => {
      started.push(item);
      if (item === 1) throw new Error('item 1 failed');
      await new Promise((resolve) => setTimeout(resolve, 20));
      finished.push(item);
      return item;
    });

    // WHEN / THEN
    await expect(run).rejects.toThrow('item 1 failed');
    expect({ started, finished }).toEqual({ started: [0, 1], finished: [0] });
  });
});
