import { fromShardMessage, toShardMessage } from '../../lambda/packing/parallel/shard-message';
import type { PlannedShard } from '../../lambda/packing/planning/plan-types';

describe('shard messages', () => {
  test('carry a planned shard to a worker and back unchanged', () => {
    // GIVEN records with unicode, spaces, tabs and newlines in their keys, unlabelled ones, large ids,
    // and change times (fractional milliseconds, zero, unknown) for the member list the worker writes
    const shard: PlannedShard = {
      index: 3,
      name: 'part-00003-of-00008',
      bytes: 2 ** 40 + 17,
      records: [
        { key: 'cat/Ça va 😺.jpg', size: 0, label: 0, recordId: 2 ** 53 - 1, modified: 1_700_000_000_123.456 },
        { key: 'dog/tab\there\nnewline.png', size: 7_000_000_000, label: -1, recordId: 0, modified: 0 },
        { key: 'x', size: 1, label: 999, recordId: 5 },
      ],
    };
    // WHEN
    const message = toShardMessage(shard);
    // THEN (strictly: a change time that was not known stays absent)
    expect(fromShardMessage(structuredClone(message))).toStrictEqual(shard);
  });

  test('carry a shard without records', () => {
    // GIVEN
    const shard: PlannedShard = { index: 0, name: 'part-00000-of-00001', bytes: 0, records: [] };
    // WHEN / THEN
    expect(fromShardMessage(toShardMessage(shard))).toEqual(shard);
  });

  test('refuse a key holding NUL, which would split it, naming the shard', () => {
    // GIVEN
    const shard: PlannedShard = { index: 0, name: 'part-00000-of-00001', bytes: 2, records: [{ key: 'a\0b', size: 2, label: 0, recordId: 0 }] };
    // WHEN / THEN
    expect(() => fromShardMessage(toShardMessage(shard))).toThrow('shard part-00000-of-00001: 2 keys for 1 records (a key holds a NUL character)');
  });
});
