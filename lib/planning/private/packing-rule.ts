import type { ResolvedCluster } from '../../instances/private/cluster-rules';
import type { ResolvedDataset } from './plan-inputs';
import { FAST_FILE_SHARD_BYTES, PACK_BELOW_OBJECT_BYTES, shardLayout } from './shard-rules';
import { DEFAULT_SHARD_BYTES, MIN_SHARD_BYTES } from '../../contract/shard-limits';
import { formatBytes, formatCount, formatCountOf, formatMiB } from './units';
import { ShardFormat } from '../../vocabulary/shard-format';
import { S3DataDistribution } from '../../vocabulary/s3-data-distribution';
import { DatasetFormat } from '../dataset-profile';
import type { PackingAdvice, PlanWarning } from '../io-plan';
import { PlannedInputMode } from '../io-plan';

/** Whether the objects are small files to pack: only files can be packed (the packer makes each file a record). */
export function shouldPack(dataset: ResolvedDataset): boolean {
  return dataset.format === DatasetFormat.FILES && dataset.meanObjectBytes < PACK_BELOW_OBJECT_BYTES;
}

/** The packing advice, and the warnings of a layout that leaves readers idle or objects too small. */
export function planPacking(dataset: ResolvedDataset, cluster: ResolvedCluster, mode: PlannedInputMode,
  distribution: S3DataDistribution, pack: boolean): { advice: PackingAdvice; warnings: PlanWarning[] } {
  const { consumers, instanceCount } = cluster;
  const perInstance = (count: number) => (distribution === S3DataDistribution.SHARDED_BY_S3_KEY ? count / instanceCount : count);
  const readers = `${consumers} consumers = ${formatCountOf(instanceCount, 'instance')} × ` +
    `${formatCountOf(cluster.sizing.processesPerInstance, 'process', 'processes')} × ${formatCountOf(Math.max(1, cluster.loaderWorkers), 'loader worker')}`;
  const warnings: PlanWarning[] = [];

  if (!pack) {
    if (dataset.objectCount < consumers) {
      warnings.push(tooFewObjects(dataset.objectCount, consumers, false));
    }
    if (dataset.format !== DatasetFormat.FILES && dataset.meanObjectBytes < MIN_SHARD_BYTES) {
      warnings.push({
        code: 'smallShards',
        message: `the ${dataset.format} shards average ${formatMiB(dataset.meanObjectBytes)}, below the 1 MiB the packer ` +
          'writes at least: per-object costs dominate; pack the source files again into 64 MiB shards',
      });
    }
    const why = dataset.format !== DatasetFormat.FILES
      ? `the data is packed already (${formatCount(dataset.objectCount)} ${dataset.format} shards of ${formatMiB(dataset.meanObjectBytes)})`
      : shouldPack(dataset)
        ? `packing the ${formatCount(dataset.objectCount)} files of ${formatBytes(dataset.meanObjectBytes)} costs more than it saves ` +
          '(the modes\' rows price both)'
        : `the ${formatCount(dataset.objectCount)} files average ${formatBytes(dataset.meanObjectBytes)}, not small files ` +
          `(< ${PACK_BELOW_OBJECT_BYTES / 1e6} MB)`;
    return {
      warnings,
      advice: {
        pack: false,
        shardCount: dataset.objectCount,
        shardBytes: dataset.meanObjectBytes,
        consumers,
        shardsPerInstance: perInstance(dataset.objectCount),
        reason: `read as they are: ${why}; the ${readers} share them` +
          `${dataset.objectCount % consumers === 0 ? ' evenly' : `, ${dataset.objectCount % consumers} readers one object more than the others`}`,
      },
    };
  }

  const targetShardBytes = mode === PlannedInputMode.FAST_FILE ? FAST_FILE_SHARD_BYTES : DEFAULT_SHARD_BYTES;
  const layout = shardLayout(dataset.totalBytes, dataset.objectCount, consumers, targetShardBytes);
  if (!layout.enoughObjects) warnings.push(tooFewObjects(dataset.objectCount, consumers, true));
  if (layout.meanBytes < MIN_SHARD_BYTES) {
    warnings.push({
      code: 'shardsBelowMinimum',
      message: `${formatBytes(dataset.totalBytes)} over ${layout.count} shards (a multiple of the ${consumers} consumers) makes ` +
        `shards of ${formatMiB(layout.meanBytes)}, below 1 MiB: per-object costs come back; use fewer loader workers or instances`,
    });
  }
  const target = mode === PlannedInputMode.FAST_FILE
    ? `${formatMiB(targetShardBytes)} target (FastFile works best on large files)`
    : `${formatMiB(targetShardBytes)} target`;
  const split = distribution === S3DataDistribution.SHARDED_BY_S3_KEY
    ? `; ShardedByS3Key gives each instance ${formatCount(perInstance(layout.count))}`
    : '';
  return {
    warnings,
    advice: {
      pack: true,
      format: ShardFormat.TFRECORD,
      targetShardBytes,
      shardCount: layout.count,
      shardBytes: layout.meanBytes,
      consumers,
      shardsPerInstance: perInstance(layout.count),
      reason: `pack: ${formatCount(dataset.objectCount)} files of ${formatBytes(dataset.meanObjectBytes)} are small files ` +
        `(< ${PACK_BELOW_OBJECT_BYTES / 1e6} MB), each its own request; ${formatCount(layout.count)} shards of ` +
        `${formatMiB(layout.meanBytes)}: ${target}, count rounded to a multiple of the ${readers}${split}`,
    },
  };
}

function tooFewObjects(objects: number, consumers: number, packing: boolean): PlanWarning {
  return {
    code: 'moreConsumersThanObjects',
    message: `${consumers} consumers (instances × processes × loader workers) but only ${formatCount(objects)} ` +
      `${packing ? 'files to pack' : 'objects'}: some readers get nothing to read${packing ? ' and the packer refuses the layout' : ''}; ` +
      `use at most ${formatCount(objects)} consumers (fewer loader workers or instances)`,
  };
}
