import { MANIFEST_KEY, VERSIONS_PREFIX } from '../../lambda/packing/dataset-layout';
import type { PackingSink } from '../../lambda/io/storage';
import type { Manifest } from '../../lambda/packing/manifest';

/**
 * Every shard and index object of the current version of a packed dataset, by its key inside its
 * version's folder (`shards/part-…`, `index/part-…`): two runs make versions with different ids,
 * and their objects compare under the same names.
 */
export async function datasetObjects(dataset: PackingSink): Promise<Map<string, Buffer>> {
  const manifest = await currentManifest(dataset);
  const keys = [...manifest.shards.flatMap((shard) => [shard.key, shard.indexKey]), ...(manifest.globalIndexKey ? [manifest.globalIndexKey] : [])];
  const entries = await Promise.all(keys.map(async (key) => [inVersion(key), await dataset.get(key)] as const));
  return new Map(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The root's manifest.json: the current version's. */
export async function currentManifest(dataset: Pick<PackingSink, 'get'>): Promise<Manifest> {
  return JSON.parse((await dataset.get(MANIFEST_KEY)).toString('utf8')) as Manifest;
}

/**
 * `versions/<id>/shards/part-0…` → `shards/part-0…`, without the attempt a Lambda packer names in its keys
 * (`part-00000-of-00003.1a2b3c4d.tfrecord` → `part-00000-of-00003.tfrecord`).
 */
export function inVersion(key: string): string {
  return withoutAttemptIds(key.startsWith(VERSIONS_PREFIX) ? key.split('/').slice(2).join('/') : key);
}

/** Shard and index keys without the attempt a Lambda packer names in them: packed twice, the same names. */
export function withoutAttemptIds(text: string): string {
  return text.replace(/(part-\d{5,}-of-\d{5,})\.[0-9a-f]{8}(?=\.(?:tfrecord|rec|idx)\b)/g, '$1');
}

/** The same keys with the same bytes, naming the first key that differs. */
export function expectSameObjects(actual: Map<string, Buffer>, expected: Map<string, Buffer>): void {
  expect([...actual.keys()]).toEqual([...expected.keys()]);
  for (const [key, bytes] of expected) expect({ key, same: actual.get(key)!.equals(bytes) }).toEqual({ key, same: true });
}

/**
 * The manifest with every version id replaced by `VERSION` and no packer attempt in its keys: two runs of the same
 * pack make different ids and nothing else.
 */
export function withoutVersionIds<T>(manifest: T): T {
  return JSON.parse(withoutAttemptIds(JSON.stringify(manifest)).replace(/v\d{8}-[0-9a-f]{8}/g, 'VERSION')) as T;
}
