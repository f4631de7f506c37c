import * as os from 'node:os';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { engineS3Client } from '../io/s3-client';
import type { S3RetryOptions } from '../io/s3-retry';
import { S3Sink } from '../io/s3-sink';
import { S3Source } from '../io/s3-source';
import { readImagePreprocessing, readLocation, readPackingSettings, readRecordContent } from '../handler-kit/dataset-settings';
import { checksImages } from '../packing/image-check/record-content';
import type { ShardPackerEvent, ShardPackerResult } from './contract';
import { SHARD_PACKER_METRICS } from './contract';
import { packShard, parsePackerEvent } from './pack-shard';

const logger = new Logger();
const metrics = new Metrics();
const client = engineS3Client();
/** Retries of S3 calls in the current invocation (throttling, resets): a metric of how hard S3 pushed back. */
let retries = 0;
const retry: S3RetryOptions = { onRetry: () => { retries++; } };
const source = new S3Source({ client, ...readLocation(process.env, 'source'), retry });
const sink = new S3Sink({ client, ...readLocation(process.env, 'destination'), retry });
const { format, readConcurrency } = readPackingSettings(process.env);
const preprocessing = readImagePreprocessing(process.env);
const checkImages = checksImages(readRecordContent(process.env), preprocessing !== undefined);
// One shard per invocation: its images are resized one per vCPU the memory size gives (ShardedDataset sets UV_THREADPOOL_SIZE to match).
const imagesInFlight = Math.max(2, os.availableParallelism());

/** Packs one shard of the plan. */
export async function handler(event: ShardPackerEvent): Promise<ShardPackerResult> {
  const task = parsePackerEvent(event);
  logger.appendKeys({ shard: task.shardName });
  const started = Date.now();
  let inputBytes = 0;
  retries = 0;
  try {
    const result = await packShard(task, { source, sink, format, readConcurrency, preprocessing, checkImages, imagesInFlight, onFile: (bytes) => { inputBytes += bytes; } });
    const seconds = Math.max((Date.now() - started) / 1000, 0.001);
    metrics.addMetric(SHARD_PACKER_METRICS.records, MetricUnit.Count, result.shard.records);
    metrics.addMetric(SHARD_PACKER_METRICS.recordsPerSecond, MetricUnit.CountPerSecond, result.shard.records / seconds);
    metrics.addMetric(SHARD_PACKER_METRICS.inputMegabytesPerSecond, MetricUnit.MegabytesPerSecond, inputBytes / 1e6 / seconds);
    metrics.addMetric(SHARD_PACKER_METRICS.failures, MetricUnit.Count, result.failureCount);
    metrics.addMetric(SHARD_PACKER_METRICS.s3Retries, MetricUnit.Count, retries);
    if (result.failureCount > 0) logger.warn('inputs that did not become records', { failureCount: result.failureCount, resultKey: result.resultKey });
    logger.info('packed', { ...result.shard, failureCount: result.failureCount, seconds, inputBytes, retries });
    return result;
  } finally {
    metrics.publishStoredMetrics();
  }
}
