import type { PackingSink } from './io/storage';
import { isObjectNotFound } from './io/storage';
import type { Manifest } from './manifest';
import { MANIFEST_FORMAT_VERSION, serializeManifest } from './manifest';
import {
  claimKey, claimSequence, INDEX_CHANNEL_MANIFEST, MANIFEST_KEY, PUBLISHED_PREFIX, SHARDS_CHANNEL_MANIFEST, VersionLayout,
} from './dataset-layout';

/** What reading a dataset's versions needs of a store. */
export type DatasetStore = Pick<PackingSink, 'get' | 'list' | 'uri'>;

/** `published/<sequence>.json`: which version that sequence number made current, and when. */
export interface VersionClaim {
  readonly datasetVersion: string;
  /** ISO 8601. */
  readonly publishedAt: string;
}

/** A published version with its claim. */
export interface PublishedVersion extends VersionClaim {
  readonly sequence: number;
}

/** The current version and its manifest. */
export interface CurrentVersion extends PublishedVersion {
  readonly manifest: Manifest;
}

/** Another run published the sequence number this run was to publish: nothing of this run was published. */
export class ConcurrentPublishError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConcurrentPublishError';
  }
}

/** A dataset object that is not what this engine writes. */
export class DatasetObjectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatasetObjectError';
  }
}

/** Every published version, oldest first (the claims under `published/`). */
export async function publishedVersions(sink: DatasetStore): Promise<PublishedVersion[]> {
  const sequences = (await sink.list(PUBLISHED_PREFIX)).map(claimSequence).filter((n): n is number => n !== undefined).sort((a, b) => a - b);
  return Promise.all(sequences.map(async (sequence) => ({ sequence, ...await readClaim(sink, sequence) })));
}

/** The newest published version, or undefined when none is (a new dataset, or one packed before versions). */
export async function currentVersion(sink: DatasetStore): Promise<CurrentVersion | undefined> {
  const sequences = (await sink.list(PUBLISHED_PREFIX)).map(claimSequence).filter((n): n is number => n !== undefined);
  if (sequences.length === 0) return undefined;
  const sequence = Math.max(...sequences);
  const claim = await readClaim(sink, sequence);
  return { sequence, ...claim, manifest: await readVersionManifest(sink, claim.datasetVersion) };
}

/** The manifest of a version, from its own folder. */
export async function readVersionManifest(sink: DatasetStore, datasetVersion: string): Promise<Manifest> {
  const key = new VersionLayout(datasetVersion).manifestKey;
  const manifest = parseJson<Manifest>(key, await sink.get(key));
  if (manifest.version !== MANIFEST_FORMAT_VERSION || manifest.datasetVersion !== datasetVersion || !Array.isArray(manifest.shards)) {
    throw new DatasetObjectError(`${sink.uri}${key}: not the manifest of version ${datasetVersion} (manifest version ${String(manifest.version)}, `
      + `datasetVersion ${String(manifest.datasetVersion)})`);
  }
  return manifest;
}

/**
 * Makes a complete, checked version current, atomically: creates `published/<sequence>.json` only
 * if no run has (ARCHITECTURE.md "Dataset layout"). A claim already there that names this version
 * is this run's own (a retried call whose first answer was lost). Then copies the newest version's
 * manifest and channel manifests to the root.
 *
 * @throws ConcurrentPublishError when another run published this sequence number first.
 */
export async function publishVersion(sink: PackingSink, manifest: Manifest, now: Date = new Date()): Promise<void> {
  const claim: VersionClaim = { datasetVersion: manifest.datasetVersion, publishedAt: now.toISOString() };
  if (!await sink.createIfAbsent(claimKey(manifest.sequence), Buffer.from(`${JSON.stringify(claim)}\n`))) {
    await throwIfClaimedByAnother(sink, manifest.datasetVersion, manifest.previousVersion);
  }
  await copyNewestToRoot(sink);
}

/**
 * Throws ConcurrentPublishError when another run has published the sequence number of `datasetVersion`:
 * this run can then never publish, whatever else went wrong (the winner may have pruned its objects).
 */
export async function throwIfClaimedByAnother(sink: DatasetStore, datasetVersion: string, previousVersion: string | null): Promise<void> {
  const sequence = new VersionLayout(datasetVersion).sequence;
  const winner = await readClaim(sink, sequence).catch((error: unknown) => {
    if (isObjectNotFound(error)) return undefined;
    throw error;
  });
  if (winner && winner.datasetVersion !== datasetVersion) {
    throw new ConcurrentPublishError(`${sink.uri}: another run published version ${winner.datasetVersion} as number ${sequence} `
      + `(${winner.publishedAt}) while this run made ${datasetVersion} from ${previousVersion ?? 'nothing'}: `
      + 'nothing of this run was published; pack again to build on the new version');
  }
}

/**
 * Writes the root's copies from the newest claim, again while a newer claim appears: two runs that
 * publish one after the other may copy in either order, and the last copy must be the newest.
 */
async function copyNewestToRoot(sink: PackingSink): Promise<void> {
  for (;;) {
    const current = await currentVersion(sink);
    if (!current) return;
    await sink.put(MANIFEST_KEY, serializeManifest(current.manifest));
    const layout = new VersionLayout(current.datasetVersion);
    for (const [from, to] of [[layout.shardsChannelKey, SHARDS_CHANNEL_MANIFEST], [layout.indexChannelKey, INDEX_CHANNEL_MANIFEST]]) {
      const channel = await sink.get(from).catch((error: unknown) => {
        if (isObjectNotFound(error)) return undefined;
        throw error;
      });
      if (channel) await sink.put(to, channel);
    }
    const newest = (await currentVersion(sink))?.sequence;
    if (newest === current.sequence) return;
  }
}

async function readClaim(sink: DatasetStore, sequence: number): Promise<VersionClaim> {
  const key = claimKey(sequence);
  const claim = parseJson<VersionClaim>(key, await sink.get(key));
  if (typeof claim.datasetVersion !== 'string' || typeof claim.publishedAt !== 'string') {
    throw new DatasetObjectError(`${sink.uri}${key}: a claim needs datasetVersion and publishedAt, got ${JSON.stringify(claim).slice(0, 120)}`);
  }
  return claim;
}

/** A JSON object the engine wrote; errors name the key. */
export function parseJson<T>(key: string, data: Buffer): T {
  try {
    const value: unknown = JSON.parse(data.toString('utf8'));
    if (value !== null && typeof value === 'object') return value as T;
  } catch {
    // reported below
  }
  throw new DatasetObjectError(`${key} is not the JSON this engine writes: ${data.subarray(0, 80).toString('utf8')}`);
}
