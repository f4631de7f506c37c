import { finalizeDataset } from '../packing/finalize';
import type { PackingSink } from '../packing/io/storage';
import { isObjectNotFound } from '../packing/io/storage';
import type { ManifestFailure, ManifestShard } from '../packing/manifest';
import { MANIFEST_KEY } from '../packing/manifest';
import { eventObject, HandlerInputError, integerField, stringField } from '../shard-planner/handler-input';
import type {
  PackedShardResult, PlanSummary, ShardTask} from '../shard-planner/plan-layout';
import { parseJsonObject, PLAN_KEY, resultKey, TASKS_KEY,
} from '../shard-planner/plan-layout';
import type { ShardFinalizerEvent, ShardFinalizerResult } from './contract';

const HANDLER = 'shard-finalizer';
/** Shard results read at once. */
const READ_CONCURRENCY = 32;

/** Checks the event; errors name the field. */
export function parseFinalizerEvent(event: unknown): ShardFinalizerEvent {
  const fields = eventObject(HANDLER, event);
  return {
    shardCount: integerField(HANDLER, fields, 'shardCount', 1),
    fingerprint: stringField(HANDLER, fields, 'fingerprint'),
  };
}

/**
 * Reads every packer's result in shard order and completes the dataset (merged RecordIO index,
 * manifest last). Fails, writing no manifest, when the plan is not this run's, a shard has no
 * result, or records + failures do not account for every source object.
 */
export async function finalizeShards(event: ShardFinalizerEvent, sink: PackingSink): Promise<ShardFinalizerResult> {
  const plan = parseJsonObject<PlanSummary>(PLAN_KEY, await sink.get(PLAN_KEY));
  if (plan.source?.fingerprint !== event.fingerprint || plan.shardCount !== event.shardCount) {
    throw new HandlerInputError(
      `${PLAN_KEY} is not the plan of this run: it has ${plan.shardCount} shards from source fingerprint ${plan.source?.fingerprint}, `
      + `the event says ${event.shardCount} from ${event.fingerprint} (did another execution start meanwhile?)`,
    );
  }
  const tasks = parseJsonObject<ShardTask[]>(TASKS_KEY, await sink.get(TASKS_KEY));
  if (!Array.isArray(tasks) || tasks.length !== plan.shardCount) {
    throw new HandlerInputError(`${TASKS_KEY} lists ${Array.isArray(tasks) ? tasks.length : 'no'} shards, ${PLAN_KEY} ${plan.shardCount}`);
  }

  const results = new Array<PackedShardResult>(tasks.length);
  let next = 0;
  const reader = async () => {
    while (next < tasks.length) {
      const position = next++;
      results[position] = await readResult(sink, tasks[position]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, tasks.length) }, reader));

  const shards: ManifestShard[] = results.map((result) => result.shard);
  const failures: ManifestFailure[] = results.flatMap((result) => result.failures);
  const manifest = await finalizeDataset({
    sink, format: plan.format, seed: plan.seed, source: plan.source, labels: plan.labels, shards, failures,
  });
  return {
    manifestKey: MANIFEST_KEY,
    shards: manifest.shards.length,
    records: manifest.records,
    failures: manifest.failures.length,
    bytes: manifest.shards.reduce((sum, shard) => sum + shard.bytes, 0),
  };
}

async function readResult(sink: PackingSink, task: ShardTask): Promise<PackedShardResult> {
  const key = resultKey(task.shardName);
  let data: Buffer;
  try {
    data = await sink.get(key);
  } catch (error) {
    if (isObjectNotFound(error)) throw new HandlerInputError(`shard ${task.shardName} has no result at ${key}: its packer did not finish`);
    throw error;
  }
  const result = parseJsonObject<PackedShardResult>(key, data);
  if (!result.shard || !result.shard.key?.startsWith(`shards/${task.shardName}.`) || !Array.isArray(result.failures)) {
    throw new HandlerInputError(`${key} is not the result of shard ${task.shardName}`);
  }
  return result;
}
