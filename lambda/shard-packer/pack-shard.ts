import { shardFormat } from '../packing/formats';
import type { ShardFormatName } from '../packing/formats/shard-format';
import type { ImagePreprocessing } from '../packing/preprocess/image-preprocessing';
import type { PackingSink, PackingSource } from '../io/storage';
import { writeShard } from '../packing/shard-writer';
import { eventObject, HandlerInputError, integerField, stringField } from '../handler-kit/handler-input';
import { versionOfKey, VersionLayout } from '../packing/dataset-layout';
import { MemberListError, parseMembers, plannedShardOf } from '../packing/members';
import type { PackedShardResult } from '../handler-kit/plan-layout';
import { RunFiles } from '../handler-kit/plan-layout';
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

/** How one shard is packed. */
export interface PackShardOptions {
  readonly source: PackingSource;
  readonly sink: PackingSink;
  readonly format: ShardFormatName;
  readonly readConcurrency: number;
  readonly onFile?: (bytes: number) => void;
  /** What is done to each image before it becomes a record; absent, the file's bytes unchanged. */
  readonly preprocessing?: ImagePreprocessing;
  /** Images resized at once (the function's vCPUs; see ShardWriterOptions). */
  readonly imagesInFlight?: number;
  /** Check every file as an image the readers decode (see ShardWriterOptions.checkImages). */
  readonly checkImages?: boolean;
}

/**
 * Packs one shard from its member list and writes the result next to the plan. Safe to run twice
 * for the same shard: the same members give the same bytes under the same keys.
 */
export async function packShard(task: ShardPackerEvent, options: PackShardOptions): Promise<ShardPackerResult> {
  const layout = new VersionLayout(versionOfKey(task.membersKey)!);
  let planned;
  try {
    planned = plannedShardOf(task.shardIndex, task.shardName, parseMembers(task.membersKey, await options.sink.get(task.membersKey)));
  } catch (error) {
    if (error instanceof MemberListError) throw new HandlerInputError(error.message);
    throw error;
  }
  // The shard writer is rooted at the version's folder; its keys are rebased onto the dataset.
  const written = await writeShard(planned, {
    source: options.source,
    sink: options.sink.scoped(layout.prefix),
    format: shardFormat(options.format),
    readConcurrency: options.readConcurrency,
    onFile: options.onFile,
    preprocessing: options.preprocessing,
    imagesInFlight: options.imagesInFlight,
    checkImages: options.checkImages,
  });
  const shard = { ...written.shard, key: layout.rebase(written.shard.key), indexKey: layout.rebase(written.shard.indexKey), membersKey: task.membersKey };
  const key = new RunFiles(layout).resultKey(task.shardName);
  const result: PackedShardResult = { shard, failures: written.failures };
  await options.sink.put(key, Buffer.from(`${JSON.stringify(result)}\n`));
  return { shard, failureCount: written.failures.length, resultKey: key };
}
