import { shardName } from '../../../lambda/packing/planning/shard-name';

describe('shardName', () => {
  test.each([
    [0, 1, 'part-00000-of-00001'],
    [7, 128, 'part-00007-of-00128'],
    [99998, 99999, 'part-99998-of-99999'],
    [0, 100000, 'part-000000-of-100000'],
    [123456, 1234567, 'part-0123456-of-1234567'],
  ])('shard %p of %p is %p', (index, count, expected) => {
    expect(shardName(index, count)).toBe(expected);
  });

  test('names sort in shard order', () => {
    const names = Array.from({ length: 1000 }, (_, i) => shardName(i, 100_000));
    expect([...names].sort()).toEqual(names);
  });
});
