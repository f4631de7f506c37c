import type { PackingSink } from '../io/storage';
import { isObjectNotFound } from '../io/storage';
import { JsonLimitError, parseBoundedJson } from '../io/bounded-json';
import { printable } from '../io/printable';
import type { Manifest } from './manifest';
import { MANIFEST_FORMAT_VERSION } from './manifest';
import { claimKey, claimSequence, MANIFEST_KEY, PUBLISHED_PREFIX, VersionLayout } from './dataset-layout';

/** What reading a dataset's versions needs of a store. */
export type DatasetStore = Pick<PackingSink, 'get' | 'list' | 'uri'>;

/** What reading the claims with their times needs: the store's clock too. */
export type ClaimStore = Pick<PackingSink, 'get' | 'list' | 'uri' | 'modifiedAt'>;

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

/** A published version with the time its claim was made by the store's clock. */
export interface ClaimedVersion extends PublishedVersion {
  /**
   * When the store wrote the claim, in milliseconds since the epoch: the one clock that every run
   * shares, whatever the packers' clocks say (`publishedAt` is the packer's, kept for people).
   */
  readonly claimedAt: number;
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

/**
 * A run failed at its claim or after it. Nothing of its version may then be deleted by the run: the
 * claim may have been made (its answer lost) or was made. The next pack, or `training-io verify
 * --repair`, finishes the job: it brings the root's copies to the newest claim, and the next
 * publish prunes what is left (a folder whose number another version took goes then).
 */
export class AfterClaimError extends Error {
  constructor(
    public readonly datasetVersion: string,
    /** True when the claim is known to be made; false when its answer was lost. */
    public readonly published: boolean,
    step: string,
    cause: unknown,
  ) {
    super(`${datasetVersion} ${published ? 'is published and current' : 'may or may not be published (the answer to its claim was lost)'}; `
      + `then ${step} failed: ${(cause as Error)?.message ?? String(cause)}. Nothing of ${datasetVersion} was deleted; the next pack `
      + `(or training-io verify --repair) ${published ? 'finishes the root copies, and the next publish the prune' : 'repairs the root copies if it was published'}`,
    { cause });
    this.name = 'AfterClaimError';
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
export async function publishedClaims(sink: DatasetStore): Promise<PublishedVersion[]> {
  return Promise.all((await claimSequences(sink)).map(async (sequence) => ({ sequence, ...await readClaim(sink, sequence) })));
}

/** The sequence numbers of the claims under `published/`, in order. */
async function claimSequences(sink: DatasetStore): Promise<number[]> {
  return (await sink.list(PUBLISHED_PREFIX)).map(claimSequence).filter((n): n is number => n !== undefined).sort((a, b) => a - b);
}

/** Every published version, oldest first, with the store's time of each claim. */
export async function publishedVersions(sink: ClaimStore): Promise<ClaimedVersion[]> {
  return Promise.all((await publishedClaims(sink)).map(async (claim) => ({ ...claim, claimedAt: await sink.modifiedAt(claimKey(claim.sequence)) })));
}

/** The newest published version, or undefined when none is (a new dataset, or one packed before versions). */
export async function currentVersion(sink: DatasetStore): Promise<CurrentVersion | undefined> {
  const newest = await newestClaim(sink);
  return newest && { ...newest, manifest: await readVersionManifest(sink, newest.datasetVersion) };
}

/** The manifest of `datasetVersion` when a claim publishes it, else undefined (not yet claimed, or its number taken by another version). */
export async function manifestIfPublished(sink: DatasetStore, datasetVersion: string): Promise<Manifest | undefined> {
  const layout = new VersionLayout(datasetVersion);
  const claim = await getIfPresent(sink, claimKey(layout.sequence));
  if (!claim || parseJson<Partial<VersionClaim>>(claimKey(layout.sequence), claim).datasetVersion !== datasetVersion) return undefined;
  return readVersionManifest(sink, datasetVersion);
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
 * if no run has (ARCHITECTURE.md "Publishing protocol"). A claim already there that names this
 * version is this run's own (a retried call whose first answer was lost). Then brings the root's
 * copies up to the newest claim, and returns that claim: this version, or a newer one another run
 * published while this one copied (this version was then superseded, and may have been pruned).
 *
 * @throws ConcurrentPublishError when another run published this sequence number first: then, and
 *   only then, is it certain that this run published nothing. Any other error leaves it open
 *   whether the claim was made, so the caller must delete nothing of the version.
 */
export async function publishVersion(sink: PackingSink, manifest: Manifest, now: Date = new Date()): Promise<PublishedVersion> {
  const claim: VersionClaim = { datasetVersion: manifest.datasetVersion, publishedAt: now.toISOString() };
  if (!await sink.createIfAbsent(claimKey(manifest.sequence), Buffer.from(`${JSON.stringify(claim)}\n`))) {
    await throwIfClaimedByAnother(sink, manifest.datasetVersion, manifest.previousVersion);
  }
  const { current } = await syncRootCopiesToNewest(sink).catch((error: unknown) => {
    throw new AfterClaimError(manifest.datasetVersion, true, 'copying it to the root', error);
  });
  // The claim was made, so there is a newest one; undefined only on a store that lost it.
  return current ?? { sequence: manifest.sequence, ...claim };
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
 * Brings the root's copies (`manifest.json`, and on S3 `shards.manifest` and `index.manifest`) to
 * the newest claim's version, rewriting only those that differ, and again while a newer claim
 * appears: two runs that publish one after the other may copy in either order, and the last copy
 * must be the newest. A run that stopped between its claim and its copies left the root behind;
 * every pack calls this before anything else, so the next one repairs it, and `verify --repair`
 * does the same on demand. Returns the root keys it rewrote.
 */
export async function syncRootCopies(sink: PackingSink): Promise<string[]> {
  return (await syncRootCopiesToNewest(sink)).rewritten;
}

/** What {@link syncRootCopies} rewrote, and the claim the root's copies now name (none in a dataset without claims). */
export interface RootCopies {
  readonly rewritten: string[];
  readonly current?: PublishedVersion;
}

/** {@link syncRootCopies}, also saying which claim the copies reached. */
export async function syncRootCopiesToNewest(sink: PackingSink): Promise<RootCopies> {
  const rewritten = new Set<string>();
  for (;;) {
    const newest = await newestClaim(sink);
    if (!newest) return { rewritten: [] };
    const layout = new VersionLayout(newest.datasetVersion);
    let superseded = false;
    for (const { versionKey, rootKey } of layout.rootCopies) {
      const wanted = await getIfPresent(sink, versionKey);
      // The channel manifests exist on S3 only; the version's manifest always does (finalize writes it before the claim)
      // until a newer claim makes it old and a prune with a short retention deletes it: then the newer claim is copied.
      if (!wanted) {
        if (rootKey !== MANIFEST_KEY) continue;
        if ((await newestClaim(sink))?.sequence !== newest.sequence) {
          superseded = true;
          break;
        }
        throw new DatasetObjectError(`${sink.uri}${layout.manifestKey}: missing, though claim ${claimKey(newest.sequence)} publishes it`);
      }
      const held = await getIfPresent(sink, rootKey);
      if (held && held.equals(wanted)) continue;
      await sink.put(rootKey, wanted);
      rewritten.add(rootKey);
    }
    if (!superseded && (await newestClaim(sink))?.sequence === newest.sequence) return { rewritten: [...rewritten], current: newest };
  }
}

/** The newest claim, without reading its version's manifest. */
async function newestClaim(sink: DatasetStore): Promise<PublishedVersion | undefined> {
  const sequence = (await claimSequences(sink)).at(-1);
  return sequence === undefined ? undefined : { sequence, ...await readClaim(sink, sequence) };
}

async function getIfPresent(sink: DatasetStore, key: string): Promise<Buffer | undefined> {
  return sink.get(key).catch((error: unknown) => {
    if (isObjectNotFound(error)) return undefined;
    throw error;
  });
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
    const value: unknown = parseBoundedJson(key, data);
    if (value !== null && typeof value === 'object') return value as T;
  } catch (error) {
    if (error instanceof JsonLimitError) throw new DatasetObjectError(error.message);
    // otherwise reported below
  }
  throw new DatasetObjectError(`${key} is not the JSON this engine writes: ${printable(data.subarray(0, 80).toString('utf8'))}`);
}
