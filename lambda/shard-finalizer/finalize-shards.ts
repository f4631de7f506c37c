import { versionSequence, VersionLayout } from '../packing/dataset-layout';
import { finalizeDataset } from '../packing/finalize';
import { DELETES_AT_ONCE, mapLimited } from '../packing/limited';
import type { PackingSink } from '../io/storage';
import { isObjectNotFound } from '../io/storage';
import type { Manifest, ManifestFailure, ManifestShard } from '../packing/manifest';
import { AfterClaimError, manifestIfPublished, syncRootCopiesToNewest, throwIfClaimedByAnother } from '../packing/publish';
import { MANIFEST_KEY } from '../packing/dataset-layout';
import { pruneVersions } from '../packing/prune';
import { describe, eventObject, HandlerInputError, integerField, stringField } from '../handler-kit/handler-input';
import type { PackedShardResult, PlanSummary, ShardTask } from '../handler-kit/plan-layout';
import { parseJsonObject, RunFiles } from '../handler-kit/plan-layout';
import type { ShardFinalizerEvent, ShardFinalizerResult } from './contract';

const HANDLER = 'shard-finalizer';
/** Shard results read at once. */
const READ_CONCURRENCY = 32;

/** Checks the event; errors name the field. */
export function parseFinalizerEvent(event: unknown): ShardFinalizerEvent {
  const fields = eventObject(HANDLER, event);
  const datasetVersion = stringField(HANDLER, fields, 'datasetVersion');
  if (versionSequence(datasetVersion) === undefined) {
    throw new HandlerInputError(`${HANDLER}: event field 'datasetVersion' must be a version id like 'v00000002-1a2b3c4d', got ${describe(datasetVersion)}`);
  }
  return {
    datasetVersion,
    shardCount: integerField(HANDLER, fields, 'shardCount', 0),
    fingerprint: stringField(HANDLER, fields, 'fingerprint'),
  };
}

/**
 * Reads every packer's result in shard order and completes the dataset through the engine's
 * finalize, publish and prune (the CLI's pack runs the same). Fails, writing no manifest, when the
 * plan is not this run's, a shard has no result, records + failures do not account for every
 * source object, or some input is a listed failure and `allowMissing` is false (MissingFilesError,
 * naming them: the execution fails and the version before stays current). Invoked again after its claim (a retry after an error or a lost answer), it
 * finishes what the first call left: the working files, the root's copies and the prune.
 */
export async function finalizeShards(event: ShardFinalizerEvent, sink: PackingSink, retentionDays: number, allowMissing = false): Promise<ShardFinalizerResult> {
  const run = new RunFiles(new VersionLayout(event.datasetVersion));
  const retentionMs = retentionDays * 86_400_000;
  const published = await manifestIfPublished(sink, run.version.id);
  if (published) {
    const current = await finishPublished(sink, run, published.datasetVersion);
    const pruned = await pruneVersions(sink, retentionMs).catch((error: unknown) => {
      throw new AfterClaimError(published.datasetVersion, true, 'pruning old versions', error);
    });
    return resultOf(published, current, run.version, pruned.prunedVersions.length);
  }
  // Another run took this version's number: say that, not what its pruning removed from under this run.
  await throwIfClaimedByAnother(sink, event.datasetVersion, null);
  const plan = parseJsonObject<PlanSummary>(run.planKey, await sink.get(run.planKey));
  if (plan.datasetVersion !== event.datasetVersion || plan.source?.fingerprint !== event.fingerprint || plan.shardCount !== event.shardCount) {
    throw new HandlerInputError(
      `${run.planKey} is not the plan of this run: it has ${plan.shardCount} shards of ${plan.datasetVersion} from source fingerprint `
      + `${plan.source?.fingerprint}, the event says ${event.shardCount} of ${event.datasetVersion} from ${describe(event.fingerprint)}`,
    );
  }
  const tasks = parseJsonObject<ShardTask[]>(run.tasksKey, await sink.get(run.tasksKey));
  if (!Array.isArray(tasks) || tasks.length !== plan.shardCount) {
    throw new HandlerInputError(`${run.tasksKey} lists ${Array.isArray(tasks) ? tasks.length : 'no'} shards, ${run.planKey} ${plan.shardCount}`);
  }

  const results = await mapLimited(tasks, READ_CONCURRENCY, (task) => readResult(sink, run, task));

  const shards: ManifestShard[] = [...plan.reused, ...results.map((result) => result.shard)];
  const failures: ManifestFailure[] = [...(plan.failures ?? []), ...results.flatMap((result) => result.failures)];
  const { manifest, prune } = await finalizeDataset({
    sink, datasetVersion: plan.datasetVersion, previousVersion: plan.previousVersion, format: plan.format, seed: plan.seed,
    source: plan.source, labels: plan.labels, sizing: plan.sizing, shards, failures, allowMissing, retentionMs,
    ...(plan.preprocessing ? { preprocessing: plan.preprocessing } : {}),
    ...(plan.sample ? { sample: plan.sample } : {}),
  });
  const current = await finishPublished(sink, run, manifest.datasetVersion);
  return resultOf(manifest, current, run.version, prune.prunedVersions.length);
}

/** After the claim: the run's working files go and the root's copies reach the newest claim, whose version it returns. */
async function finishPublished(sink: PackingSink, run: RunFiles, datasetVersion: string): Promise<string> {
  try {
    await mapLimited(await sink.list(run.version.planPrefix), DELETES_AT_ONCE, (key) => sink.delete(key));
    return (await syncRootCopiesToNewest(sink)).current?.datasetVersion ?? datasetVersion;
  } catch (error) {
    throw new AfterClaimError(datasetVersion, true, 'removing its working files and copying it to the root', error);
  }
}

function resultOf(manifest: Manifest, currentVersion: string, version: VersionLayout, prunedVersions: number): ShardFinalizerResult {
  return {
    datasetVersion: manifest.datasetVersion,
    currentVersion,
    versionManifestKey: version.manifestKey,
    prunedVersions,
    manifestKey: MANIFEST_KEY,
    shards: manifest.shards.length,
    records: manifest.records,
    failures: manifest.failures.length,
    bytes: manifest.shards.reduce((sum, shard) => sum + shard.bytes, 0),
  };
}

async function readResult(sink: PackingSink, run: RunFiles, task: ShardTask): Promise<PackedShardResult> {
  const key = run.resultKey(task.shardName);
  let data: Buffer;
  try {
    data = await sink.get(key);
  } catch (error) {
    if (isObjectNotFound(error)) throw new HandlerInputError(`shard ${task.shardName} has no result at ${key}: its packer did not finish`);
    throw error;
  }
  const result = parseJsonObject<PackedShardResult>(key, data);
  if (!result.shard || !result.shard.key?.startsWith(`${run.version.prefix}shards/${task.shardName}.`) || !Array.isArray(result.failures)) {
    throw new HandlerInputError(`${key} is not the result of shard ${task.shardName}`);
  }
  await checkStoredShard(sink, key, result.shard);
  return result;
}

/**
 * The shard object the result names is the one its packer wrote: its size and CRC-32C as stored
 * match the result's. Each packer attempt writes keys of its own, so this holds unless the store
 * lost or changed the object; then nothing is published, rather than a version whose shard fails its CRC.
 */
async function checkStoredShard(sink: PackingSink, resultKey: string, shard: ManifestShard): Promise<void> {
  const stored = await sink.stat(shard.key).catch((error: unknown) => {
    if (isObjectNotFound(error)) throw new HandlerInputError(`${resultKey} names ${shard.key}, which is not there: not publishing`);
    throw error;
  });
  if (stored.bytes !== shard.bytes || stored.crc32c !== shard.crc32c) {
    throw new HandlerInputError(`${sink.uri}${shard.key} holds ${stored.bytes} bytes with CRC-32C ${stored.crc32c}, `
      + `its packer's result ${resultKey} says ${shard.bytes} bytes with CRC-32C ${shard.crc32c}: not publishing`);
  }
}
