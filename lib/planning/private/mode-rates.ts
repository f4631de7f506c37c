import type { ResolvedCluster } from '../../instances/private/cluster-rules';
import { EBS_GP2_MAX_BYTES_PER_SECOND } from '../../instances/private/storage-rules';
import type { TrainingInstance } from '../../instances/training-instance';
import { DOWNLOAD_PARALLELISM, networkBytesPerSecond, objectsPerSecond, S3_GETS_PER_SECOND_PER_PREFIX, SMALL_REQUEST_SECONDS } from './startup-rules';

// The rates each input mode reads at, per instance: named assumptions with their sources. The
// planner evaluates every mode with them (mode-estimates.ts); docs/decisions.md explains each.

/**
 * What one S3 connection delivers on a large object: "make one concurrent request for each 85–90
 * MB/s of desired network throughput" (S3 user guide, "Performance guidelines for Amazon S3",
 * "Measure performance"): the low end.
 */
export const S3_CONNECTION_BYTES_PER_SECOND = 85e6;

/** SageMaker's parallel S3 download onto one instance (File mode's): DOWNLOAD_PARALLELISM connections. */
const PARALLEL_DOWNLOAD_BYTES_PER_SECOND = DOWNLOAD_PARALLELISM * S3_CONNECTION_BYTES_PER_SECOND;

/**
 * SageMaker's stream into a Pipe-mode FIFO: the same parallel S3 download as File mode's. An
 * assumption: SageMaker publishes no Pipe rate, and the AWS blog "Choose the best data source for
 * your Amazon SageMaker training job" (2022) measures whole jobs, not the stream alone.
 */
export const PIPE_STREAM_BYTES_PER_SECOND = PARALLEL_DOWNLOAD_BYTES_PER_SECOND;

/**
 * What this library's Pipe-mode reader on one host deals to its consumers at most, as
 * bench/pipe-fanout.py measures it with 88 consumers (8 GPU processes × 11 workers): on a loaded
 * 2-core machine the splice path moved 0.15–0.46 GB/s wall, and its CPU cost (0.23–0.88 s per GB)
 * bounds it at 1.1 GB/s with a core to itself; on a stock image (no fast CRC-32C, shards checked whole
 * on the copy path) 0.76–1.24 s per GB bounds it at 0.8 GB/s, a thread that shares its interpreter with
 * local rank 0's training loop. 0.5 GB/s: between the wall figures and those bounds, until a
 * many-core host measures it.
 */
export const PIPE_HOST_FANOUT_BYTES_PER_SECOND = 0.5e9;

/** What limits a mode's read rate. */
export enum Bottleneck {
  NETWORK = 'network',
  S3_CONNECTIONS = 'S3 connections',
  S3_REQUESTS = 'S3 requests',
  S3_PREFIX = 'S3 GETs per prefix',
  EBS_VOLUME = 'EBS volume',
  LOCAL_STORAGE = 'none (local storage)',
  PIPE_STREAM = 'Pipe stream',
  PIPE_FANOUT = 'Pipe fan-out',
  FSX_THROUGHPUT = 'FSx throughput',
  DECODING = 'decoding',
  GPU = 'none (the GPUs)',
}

/** A read rate per instance and what sets it. */
export interface Rate {
  readonly bytesPerSecond: number;
  readonly bottleneck: Bottleneck;
}

/** The lowest of the candidates. */
export function slowest(...rates: Rate[]): Rate {
  return rates.reduce((low, rate) => (rate.bytesPerSecond < low.bytesPerSecond ? rate : low));
}

function network(instance: TrainingInstance): Rate {
  return { bytesPerSecond: networkBytesPerSecond(instance) ?? Number.POSITIVE_INFINITY, bottleneck: Bottleneck.NETWORK };
}

/**
 * File mode's download rate onto one instance: its baseline network, DOWNLOAD_PARALLELISM S3
 * connections, and the volume it writes to (a gp2 EBS volume where there is no local NVMe).
 */
export function fileDownloadRate(instance: TrainingInstance): Rate {
  return slowest(
    network(instance),
    { bytesPerSecond: PARALLEL_DOWNLOAD_BYTES_PER_SECOND, bottleneck: Bottleneck.S3_CONNECTIONS },
    ...(instance.hasLocalNvme ? [] : [{ bytesPerSecond: EBS_GP2_MAX_BYTES_PER_SECOND, bottleneck: Bottleneck.EBS_VOLUME }]),
  );
}

/** Seconds one instance spends downloading `bytes` in `objects` objects before File-mode training starts. */
export function fileDownloadSeconds(instance: TrainingInstance, bytes: number, objects: number, instancesReading: number): number {
  return bytes / fileDownloadRate(instance).bytesPerSecond + objects / objectsPerSecond(instancesReading);
}

/**
 * Objects read on demand (FastFile, or an FSx for Lustre file's first read, loaded from S3): each
 * loader worker reads one object at a time, one request's latency plus its bytes over one
 * connection; all instances share S3's GETs per prefix; the network caps the rest.
 */
export function onDemandRate(cluster: ResolvedCluster, meanObjectBytes: number): Rate {
  const readers = cluster.sizing.processesPerInstance * Math.max(1, cluster.loaderWorkers);
  const perObjectSeconds = SMALL_REQUEST_SECONDS + meanObjectBytes / S3_CONNECTION_BYTES_PER_SECOND;
  const small = meanObjectBytes / S3_CONNECTION_BYTES_PER_SECOND < SMALL_REQUEST_SECONDS;
  return slowest(
    network(cluster.instance),
    { bytesPerSecond: readers * meanObjectBytes / perObjectSeconds, bottleneck: small ? Bottleneck.S3_REQUESTS : Bottleneck.S3_CONNECTIONS },
    { bytesPerSecond: S3_GETS_PER_SECOND_PER_PREFIX / cluster.instanceCount * meanObjectBytes, bottleneck: Bottleneck.S3_PREFIX },
  );
}

/** Pipe mode on one instance: SageMaker's stream, this library's fan-out on the host, the network. */
export function pipeRate(instance: TrainingInstance): Rate {
  return slowest(
    network(instance),
    { bytesPerSecond: PIPE_STREAM_BYTES_PER_SECOND, bottleneck: Bottleneck.PIPE_STREAM },
    { bytesPerSecond: PIPE_HOST_FANOUT_BYTES_PER_SECOND, bottleneck: Bottleneck.PIPE_FANOUT },
  );
}

/** One instance's share of an FSx for Lustre file system's baseline throughput, within its network. */
export function fsxRate(cluster: ResolvedCluster, fileSystemBytesPerSecond: number): Rate {
  return slowest(network(cluster.instance),
    { bytesPerSecond: fileSystemBytesPerSecond / cluster.instanceCount, bottleneck: Bottleneck.FSX_THROUGHPUT });
}

/** File-mode reads after the download: local NVMe does not limit; a gp2 EBS volume may, unless the page cache holds the data. */
export function localReadRate(instance: TrainingInstance, fitsInMemory: boolean): Rate {
  return instance.hasLocalNvme || fitsInMemory
    ? { bytesPerSecond: Number.POSITIVE_INFINITY, bottleneck: Bottleneck.LOCAL_STORAGE }
    : { bytesPerSecond: EBS_GP2_MAX_BYTES_PER_SECOND, bottleneck: Bottleneck.EBS_VOLUME };
}
