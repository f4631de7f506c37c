import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { engineS3Client } from '../io/s3-client';
import { S3Sink } from '../io/s3-sink';
import { S3Source } from '../io/s3-source';
import type { ShardPlannerEvent, ShardPlannerResult } from './contract';
import { readFilePatterns, readInventory, readLocation, readPlanSettings } from '../handler-kit/dataset-settings';
import { FilteredSource } from '../packing/listing/filtered-source';
import { booleanField, eventObject } from '../handler-kit/handler-input';
import { planDataset } from './plan-dataset';
import { parseS3ObjectUri, readS3LabelTable } from '../packing/labels/read-label-file';

const logger = new Logger();
const metrics = new Metrics();
const client = engineS3Client();
const source = readLocation(process.env, 'source');
const destination = readLocation(process.env, 'destination');
const settings = readPlanSettings(process.env);
const inventory = readInventory(process.env);
const filePatterns = readFilePatterns(process.env);
const labelFile = settings.labelFile === undefined ? undefined : parseS3ObjectUri(settings.labelFile);

/** Lists the source, plans the shards, writes the plan; or says the dataset is up to date. */
export async function handler(event: ShardPlannerEvent): Promise<ShardPlannerResult> {
  const force = booleanField('shard-planner', eventObject('shard-planner', event ?? {}), 'force');
  const started = Date.now();
  try {
    const result = await planDataset({
      source: new FilteredSource(new S3Source({
        client, bucket: source.bucket, prefix: source.prefix,
        inventory: inventory && { bucket: inventory.bucket, key: inventory.prefix },
      }), filePatterns),
      sink: new S3Sink({ client, bucket: destination.bucket, prefix: destination.prefix }),
      destination,
      settings,
      // Read at every execution, before the listing: the file may have changed since the last.
      labelTable: labelFile && await readS3LabelTable(client, labelFile.bucket, labelFile.key),
      force,
    });
    if (result.unmatchedLabelRows > 0) {
      logger.warn('rows of the label file name no listed file', { labelFile: settings.labelFile, unmatchedLabelRows: result.unmatchedLabelRows });
    }
    const seconds = Math.max((Date.now() - started) / 1000, 0.001);
    metrics.addMetric('SourceObjects', MetricUnit.Count, result.source.objects);
    metrics.addMetric('PlannedShards', MetricUnit.Count, result.upToDate ? 0 : result.shardCount);
    metrics.addMetric('ObjectsPlannedPerSecond', MetricUnit.CountPerSecond, result.source.objects / seconds);
    logger.info(result.upToDate ? 'dataset is up to date' : 'planned', { ...result, seconds });
    return result;
  } finally {
    metrics.publishStoredMetrics();
  }
}
