import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { PACKER_METRICS } from '../../lib/contract/metric-names';
import { engineS3Client } from '../io/s3-client';
import { S3Sink } from '../io/s3-sink';
import { readLocation, readPackingSettings } from '../handler-kit/dataset-settings';
import type { ShardFinalizerEvent, ShardFinalizerResult } from './contract';
import { finalizeShards, parseFinalizerEvent } from './finalize-shards';

const logger = new Logger();
const metrics = new Metrics();
const client = engineS3Client();
const sink = new S3Sink({ client, ...readLocation(process.env, 'destination') });
const { retentionDays, allowMissing } = readPackingSettings(process.env);

/** Merges the packers' results into a version's manifest and publishes it. */
export async function handler(event: ShardFinalizerEvent): Promise<ShardFinalizerResult> {
  const parsed = parseFinalizerEvent(event);
  try {
    const result = await finalizeShards(parsed, sink, retentionDays, allowMissing);
    metrics.addMetric(PACKER_METRICS.records, MetricUnit.Count, result.records);
    metrics.addMetric(PACKER_METRICS.failures, MetricUnit.Count, result.failures);
    metrics.addMetric('Shards', MetricUnit.Count, result.shards);
    logger.info('dataset complete', { ...result });
    return result;
  } finally {
    metrics.publishStoredMetrics();
  }
}
