import { randomBytes } from 'node:crypto';
import { shardFormat } from '../packing/formats';
import type { ShardFormatName } from '../packing/formats/shard-format';
import type { PackingSink } from '../io/storage';
import { isObjectNotFound } from '../io/storage';
import { manifestIfPublished } from '../packing/publish';
import type { ShardWriterOptions } from '../packing/shard-writer';
import { writeShard } from '../packing/shard-writer';
import { eventObject, HandlerInputError, integerField, stringField } from '../handler-kit/handler-input';
import { versionOfKey, VersionLayout } from '../packing/dataset-layout';
import { MemberListError, parseMembers, plannedShardOf } from '../packing/members';
import type { PackedShardResult } from '../handler-kit/plan-layout';
import { parseJsonObject, RunFiles } from '../handler-kit/plan-layout';
import type { ShardPackerEvent, ShardPackerResult } from './contract';

const HANDLER = 'shard-packer';
const SHARD_NAME = /^part-\d{5,}-of-\d{5,}$/;

/** Checks the Map item; errors name the field. */
export function parsePackerEvent(event: unknown): ShardPackerEvent {
  const fields = eventObject(HANDLER, event);
  const shardIndex = integerField(HANDLER, fields, 'shardIndex', 0);
  const shardName = stringField(HANDLER, fields, 'shardName');
  if (!SHARD_NAME.test(shardName)) {
    throw new HandlerInputError(`${HANDLER}: event field 'shardName' must look like 'part-00000-of-00008', got '${shardName}'`);
  }
  const membersKey = stringField(HANDLER, fields, 'membersKey');
  const version = versionOfKey(membersKey);
  if (version === undefined || membersKey !== new VersionLayout(version).membersKey(shardName)) {
    throw new HandlerInputError(`${HANDLER}: event field 'membersKey' must be the member list of shard ${shardName} in a version's folder `
      + `(versions/<version>/members/${shardName}.jsonl), got '${membersKey}'`);
  }
  return { shardIndex, shardName, membersKey };
}

/**
 * How one shard is packed: a shard writer's options (ShardWriterOptions, the one place they are
 * described), the format by its name as the plan carries it, and the attempt named here when the
 * caller does not (8 random hex digits: a Step Functions retry may run beside the first attempt).
 */
export interface PackShardOptions extends Omit<ShardWriterOptions, 'format'> {
  readonly format: ShardFormatName;
}

/**
 * A packer attempt that ended after its version was published from another attempt's result: its
 * objects were removed again, and the published version is as it was.
 */
export class LateAttemptError extends Error {
  constructor(shardName: string, datasetVersion: string) {
    super(`shard ${shardName}: ${datasetVersion} was published from another attempt at this shard while this one ran; `
      + 'this attempt removed what it wrote and changed nothing of the version');
    this.name = 'LateAttemptError';
  }
}

/**
 * Packs one shard from its member list and writes the result next to the plan. Safe to run twice,
 * even at once (a Step Functions retry while the first Lambda attempt still runs, with the source
 * changed in between): each attempt writes its shard and index under keys of its own
 * (`shards/<shard>.<attempt>.tfrecord`), and the result is created only if absent, so the first
 * attempt to finish names the shard for good. A later attempt adopts that result and removes its
 * own objects (a result that names this attempt's own shard key is its own, its create's answer
 * lost: it keeps its objects); one that ends after the version was published removes its objects too, and fails
 * with a LateAttemptError. No attempt ever writes over an object another one wrote.
 */
export async function packShard(task: ShardPackerEvent, options: PackShardOptions): Promise<ShardPackerResult> {
  const layout = new VersionLayout(versionOfKey(task.membersKey)!);
  const key = new RunFiles(layout).resultKey(task.shardName);
  // A retry after an attempt that finished (its answer lost): that result stands, nothing is packed again.
  const earlier = await readResultIfPresent(options.sink, key);
  if (earlier) return summary(earlier, key);
  let planned;
  try {
    planned = plannedShardOf(task.shardIndex, task.shardName, parseMembers(task.membersKey, await options.sink.get(task.membersKey)));
  } catch (error) {
    if (error instanceof MemberListError) throw new HandlerInputError(error.message);
    throw error;
  }
  // The shard writer is rooted at the version's folder; its keys are rebased onto the dataset.
  const written = await writeShard(planned, {
    ...options,
    sink: options.sink.scoped(layout.prefix),
    format: shardFormat(options.format),
    attempt: options.attempt ?? randomBytes(4).toString('hex'),
  });
  const shard = { ...written.shard, key: layout.rebase(written.shard.key), indexKey: layout.rebase(written.shard.indexKey), membersKey: task.membersKey };
  const result: PackedShardResult = { shard, failures: written.failures };
  const ownObjects = [shard.key, shard.indexKey];
  if (!await options.sink.createIfAbsent(key, Buffer.from(`${JSON.stringify(result)}\n`))) {
    const adopted = await readResultIfPresent(options.sink, key);
    // The answer to this attempt's own create was lost and the SDK's retry found it: the result is ours.
    if (adopted?.shard.key === shard.key) return summary(adopted, key);
    await deleteAll(options.sink, ownObjects);
    if (!adopted) throw new LateAttemptError(task.shardName, layout.id);
    return summary(adopted, key);
  }
  // Created after the finalizer removed the run's working files: the version was published without this attempt.
  const published = await manifestIfPublished(options.sink, layout.id);
  if (published && !published.shards.some((listed) => listed.key === shard.key)) {
    await deleteAll(options.sink, [...ownObjects, key]);
    throw new LateAttemptError(task.shardName, layout.id);
  }
  return summary(result, key);
}

function summary(result: PackedShardResult, resultKey: string): ShardPackerResult {
  return { shard: result.shard, failureCount: result.failures.length, resultKey };
}

async function readResultIfPresent(sink: PackingSink, key: string): Promise<PackedShardResult | undefined> {
  const data = await sink.get(key).catch((error: unknown) => {
    if (isObjectNotFound(error)) return undefined;
    throw error;
  });
  return data && parseJsonObject<PackedShardResult>(key, data);
}

async function deleteAll(sink: PackingSink, keys: readonly string[]): Promise<void> {
  await Promise.all(keys.map((key) => sink.delete(key)));
}
