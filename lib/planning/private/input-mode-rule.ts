import type { ResolvedCluster } from '../../instances/private/cluster-rules';
import type { ResolvedDataset } from './plan-inputs';
import { describeFileModeFit, fitsFileMode } from '../../instances/private/storage-rules';
import { GIB } from '../../contract/units';
import { formatBytes } from './units';
import { InputMode } from '../../vocabulary/input-mode';
import { S3DataDistribution } from '../../vocabulary/s3-data-distribution';
import type { InputModeAdvice} from '../io-plan';
import { PlannedInputMode } from '../io-plan';

/**
 * Epochs from which a job whose data does not fit its instances reads it from an FSx for Lustre
 * cache instead of streaming it: every streamed epoch reads the whole dataset from S3 again, while a
 * cache linked to S3 loads each file once (on first read) and serves every later epoch and job at its
 * provisioned throughput, with random access. Our threshold, not an AWS figure: below it the cache's
 * creation and cost buy little over streaming shards.
 */
export const MANY_EPOCHS = 10;

/** What the input-mode rule needs beyond the dataset and the cluster. */
export interface InputModeContext {
  readonly epochs: number;
  readonly reusedAcrossJobs: boolean;
  /** Whether the channel will read record shards (packed, or packed already): Pipe mode streams them. */
  readonly readsShards: boolean;
}

/**
 * File onto the instance's storage when the data (with headroom) fits it; FSx for Lustre when it does
 * not and it is reused or read for many epochs; otherwise streamed: Pipe with ShardedByS3Key and
 * ShuffleConfig on several instances (reshuffled across them every epoch), FastFile on one.
 */
export function chooseInputMode(dataset: ResolvedDataset, cluster: ResolvedCluster, context: InputModeContext): InputModeAdvice {
  const { instance, instanceCount } = cluster;
  const size = formatBytes(dataset.totalBytes);
  const fitsLocalStorage = fitsFileMode(instance, dataset.totalBytes);
  // After the first epoch the OS page cache serves reads from whatever RAM the loader workers leave.
  const pageCacheBytes = instance.memoryGiB * GIB - cluster.loaderMemoryBytes;
  const fitsInMemory = dataset.totalBytes <= pageCacheBytes;
  const advice = { fitsLocalStorage, fitsInMemory };

  if (fitsLocalStorage) {
    const memory = fitsInMemory
      ? `; it also fits the ${formatBytes(pageCacheBytes)} of RAM the loaders leave, so after the first epoch it is read from the page cache`
      : '';
    return {
      ...advice,
      mode: PlannedInputMode.FILE,
      channelInputMode: InputMode.FILE,
      distribution: S3DataDistribution.FULLY_REPLICATED,
      shuffleConfig: false,
      reason: `File: ${describeFileModeFit(instance, size, true)}; each instance downloads it once ` +
        `and every epoch reads local storage, shuffled by the loader${memory}`,
    };
  }
  const shareFits = instanceCount > 1 && fitsFileMode(instance, dataset.totalBytes / instanceCount);
  const doesNotFit = describeFileModeFit(instance, size, false) +
    `${shareFits ? ` (a 1/${instanceCount} share per instance would, with ShardedByS3Key, but then each instance sees only its share in every epoch)` : ''}`;
  if (context.reusedAcrossJobs || context.epochs >= MANY_EPOCHS) {
    const why = context.reusedAcrossJobs ? 'other jobs read it too' : `it is read for ${context.epochs} epochs (≥ ${MANY_EPOCHS})`;
    return {
      ...advice,
      mode: PlannedInputMode.FSX_LUSTRE,
      channelInputMode: InputMode.FILE,
      distribution: S3DataDistribution.FULLY_REPLICATED,
      shuffleConfig: false,
      reason: `FSx for Lustre: ${doesNotFit}, and ${why}: a cache linked to S3 loads each file once and serves every epoch` +
        `${context.reusedAcrossJobs ? ' and job' : ''} at its throughput; the channel is File mode and FullyReplicated ` +
        '(SageMaker mounts the file system), so the loader splits the data by rank',
    };
  }
  const streamed = `${doesNotFit}, and it is read for ${context.epochs} epoch${context.epochs === 1 ? '' : 's'} by one job, ` +
    'so streaming it from S3 costs less than a cache';
  if (instanceCount > 1 && context.readsShards) {
    return {
      ...advice,
      mode: PlannedInputMode.PIPE,
      channelInputMode: InputMode.PIPE,
      distribution: S3DataDistribution.SHARDED_BY_S3_KEY,
      shuffleConfig: true,
      reason: `Pipe with ShardedByS3Key and ShuffleConfig: ${streamed}; on ${instanceCount} instances Pipe mode reshuffles the ` +
        'shards across the instances at every epoch, which FastFile cannot',
    };
  }
  const why = instanceCount > 1
    ? `the ${dataset.format} objects are not record shards that Pipe mode could stream, so FastFile with ShardedByS3Key ` +
      'gives each instance its part'
    : 'on one instance there is nothing to reshuffle across instances, and FastFile reads shards sequentially with a plain file interface';
  return {
    ...advice,
    mode: PlannedInputMode.FAST_FILE,
    channelInputMode: InputMode.FAST_FILE,
    distribution: instanceCount > 1 ? S3DataDistribution.SHARDED_BY_S3_KEY : S3DataDistribution.FULLY_REPLICATED,
    shuffleConfig: false,
    reason: `FastFile: ${streamed}; ${why}`,
  };
}
