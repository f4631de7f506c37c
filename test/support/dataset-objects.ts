import { INDEX_PREFIX, SHARDS_PREFIX } from '../../lambda/packing/manifest';
import type { PackingSink } from '../../lambda/packing/io/storage';

/** Every shard and index object of a packed dataset, key (relative to the dataset) → bytes. */
export async function datasetObjects(dataset: PackingSink): Promise<Map<string, Buffer>> {
  const keys = [...await dataset.list(SHARDS_PREFIX), ...await dataset.list(INDEX_PREFIX)].sort();
  return new Map(await Promise.all(keys.map(async (key) => [key, await dataset.get(key)] as const)));
}

/** The same keys with the same bytes, naming the first key that differs. */
export function expectSameObjects(actual: Map<string, Buffer>, expected: Map<string, Buffer>): void {
  expect([...actual.keys()]).toEqual([...expected.keys()]);
  for (const [key, bytes] of expected) expect({ key, same: actual.get(key)!.equals(bytes) }).toEqual({ key, same: true });
}
