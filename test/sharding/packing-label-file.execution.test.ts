import type { Manifest } from '../../lambda/packing/manifest';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import { verifyDataset } from '../../lambda/packing/verify';
import { sizedJpeg } from '../support/jpeg-dataset';
import { bytesOf, parsedRecords, sampleFiles } from '../support/multi-part-samples';
import { PackingExecution } from '../support/packing-execution';
import { recordLabels } from '../support/record-labels';
import { runCli } from '../support/run-cli';

/*
 * Labels from a label file in S3: the ShardedDataset state machine executed (its planner reads
 * LABEL_FILE), and the CLI reading `--label-file s3://…`, against one local S3 server.
 */

const SAMPLES = 12;
// An execution runs every handler bundle in turn: on a busy 2-core machine the first takes over a minute, hence 180 s per execution test.
/** Every sample but the last is labelled; one row names a sample that is not in the bucket. */
const LABEL_ROWS = [
  'key,label',
  ...Array.from({ length: SAMPLES - 1 }, (_, i) => `train/${String(i).padStart(3, '0')}.jpg,${['heron', 'egret', '"ibis, sacred"'][i % 3]}`),
  'train/999,heron',
  '',
].join('\n');
const EXPECTED_LABELS = { 'egret': 0, 'heron': 1, 'ibis, sacred': 2 };

/** Multi-part samples under parts/ with their label file: rows by sample key, none for train/0004, one naming no sample. */
const PART_LABEL_ROWS = 'key,label\ntrain/0001,heron\ntrain/0002.json,egret\ntrain/0003,heron\ntrain/0099,egret\n';

const harness = PackingExecution.setUp({
  buckets: { source: 'labels-source', dataset: 'labels-dataset' },
  objects: () => {
    const objects: Record<string, Buffer | string> = {};
    for (let i = 0; i < SAMPLES; i++) {
      const key = `raw/train/${String(i).padStart(3, '0')}.jpg`;
      objects[key] = sizedJpeg(key, 2_000 + (i * 7919) % 4_000);
    }
    // Below the source prefix: the label file is read, never packed.
    objects['raw/labels.csv'] = LABEL_ROWS;
    for (const [key, data] of Object.entries(sampleFiles(['train/0001', 'train/0002', 'train/0003', 'train/0004']))) objects[`parts/${key}`] = data;
    objects['parts/labels.csv'] = PART_LABEL_ROWS;
    return objects;
  },
  cliCredentials: true,
});
const dataset = (prefix: string) => harness.dataset(prefix);
const manifestOf = (prefix: string) => harness.manifestOf(prefix);

/** Each record's file name → its label, read back from the shards in S3. */
async function labelsOf(prefix: string, manifest: Manifest): Promise<Record<string, number>> {
  return recordLabels(manifest, (key) => dataset(prefix).get(key));
}

/** The labels the rows give, by file name (the last sample has none). */
function labelledByRows(): Record<string, number> {
  const classes = ['heron', 'egret', 'ibis, sacred'];
  return Object.fromEntries(Array.from({ length: SAMPLES - 1 }, (_, i) => [
    `train/${String(i).padStart(3, '0')}.jpg`, EXPECTED_LABELS[classes[i % 3] as keyof typeof EXPECTED_LABELS],
  ]));
}

/** The construct's state machine over raw/ of the source bucket, labels from raw/labels.csv, run against the local S3 server. */
function packing(prefix: string, allowMissing: boolean) {
  return harness.packing({ sourcePrefix: 'raw/', destinationPrefix: prefix, labelFile: { key: 'raw/labels.csv' }, shardCount: 2, seed: 5, allowMissing });
}

describe('labels from a label file in S3', () => {
  test('the state machine labels each sample as the file says; the unlabelled one is a listed failure, the stray row counted', async () => {
    // WHEN
    const execution = await packing('packed/', true).run({});

    // THEN
    expect(execution).toMatchObject({ status: 'SUCCEEDED' });
    expect(execution.output.plan).toMatchObject({ classes: 3, unmatchedLabelRows: 1, source: { objects: SAMPLES } });
    expect(execution.output.dataset).toMatchObject({ records: SAMPLES - 1, failures: 1 });
    const manifest = await manifestOf('packed/');
    expect(manifest.labels).toEqual(EXPECTED_LABELS);
    expect(manifest.labelSource).toMatchObject({ mode: 'file', file: `s3://${harness.sourceBucket}/raw/labels.csv`, rows: SAMPLES, unmatchedRows: 1 });
    expect(manifest.failures).toEqual([{ key: 'train/011.jpg', reason: expect.stringContaining(`no row of the label file s3://${harness.sourceBucket}/raw/labels.csv`) }]);
    expect(await labelsOf('packed/', manifest)).toEqual(labelledByRows());
    expect((await verifyDataset(dataset('packed/'))).problems).toEqual([]);
  }, 180_000);

  test('without allowMissing the unlabelled sample fails the Finalize state, publishing nothing', async () => {
    // WHEN
    const execution = await packing('strict/', false).run({});

    // THEN
    expect(execution).toMatchObject({ status: 'FAILED', error: 'MissingFilesError' });
    expect(JSON.parse(execution.cause!).errorMessage).toContain('train/011.jpg: no row of the label file');
    expect(await dataset('strict/').list(MANIFEST_KEY)).toEqual([]);
  }, 180_000);

  test('the CLI reads --label-file s3://… and packs the same labels as the state machine', async () => {
    // WHEN
    const packed = await runCli('pack', `s3://${harness.sourceBucket}/raw/`, `s3://${harness.datasetBucket}/cli/`, '--label-file', `s3://${harness.sourceBucket}/raw/labels.csv`,
      '--shards', '2', '--seed', '5', '--allow-missing', '--endpoint-url', harness.server.endpoint, '--region', harness.server.region);

    // THEN
    expect(packed.code).toBe(0);
    expect(packed.stdout).toContain('warning: 1 row(s) name no listed file');
    const manifest = await manifestOf('cli/');
    expect(manifest).toMatchObject({ labels: EXPECTED_LABELS, records: SAMPLES - 1, labelSource: { file: `s3://${harness.sourceBucket}/raw/labels.csv`, unmatchedRows: 1 } });
    expect(await labelsOf('cli/', manifest)).toEqual(labelledByRows());
  });

  test('the state machine labels multi-part samples by sample key: the unlabelled sample one failure under its key, counted among the samples', async () => {
    // WHEN
    const execution = await harness.packing({
      sourcePrefix: 'parts/', destinationPrefix: 'parts-packed/', labelFile: { key: 'parts/labels.csv' }, shardCount: 2, seed: 5, allowMissing: true,
    }).run({});

    // THEN
    expect(execution).toMatchObject({ status: 'SUCCEEDED' });
    expect(execution.output.plan).toMatchObject({ classes: 2, unmatchedLabelRows: 1, source: { objects: 12 } });
    expect(execution.output.dataset).toMatchObject({ records: 3, failures: 1 });
    const manifest = await manifestOf('parts-packed/');
    expect(manifest).toMatchObject({ labels: { egret: 0, heron: 1 }, sample: { samples: 4 }, labelSource: { rows: 4, unmatchedRows: 1 } });
    expect(manifest.failures).toEqual([{ key: 'train/0004', reason: expect.stringContaining("labels its sample 'train/0004'") }]);
  }, 180_000);

  test('the CLI labels multi-part samples in S3 by sample key: one label per record, the unlabelled sample one failure, the stray row counted once', async () => {
    // WHEN
    const packed = await runCli('pack', `s3://${harness.sourceBucket}/parts/`, `s3://${harness.datasetBucket}/cli-parts/`, '--label-file', `s3://${harness.sourceBucket}/parts/labels.csv`,
      '--seed', '5', '--allow-missing', '--endpoint-url', harness.server.endpoint, '--region', harness.server.region);

    // THEN
    expect(packed.code).toBe(0);
    const manifest = await manifestOf('cli-parts/');
    expect(manifest).toMatchObject({
      labels: { egret: 0, heron: 1 }, records: 3, source: { objects: 12 }, sample: { samples: 4 },
      labelSource: { file: `s3://${harness.sourceBucket}/parts/labels.csv`, rows: 4, unmatchedRows: 1 },
    });
    expect(manifest.failures).toEqual([{ key: 'train/0004', reason: expect.stringContaining(`no row of the label file s3://${harness.sourceBucket}/parts/labels.csv labels its sample 'train/0004'`) }]);
    const shards = new Map(await Promise.all(manifest.shards.map(async (shard) => [shard.key, await dataset('cli-parts/').get(shard.key)] as const)));
    const labels = Object.fromEntries(parsedRecords(manifest, (key) => shards.get(key)!)
      .map((features) => [bytesOf(features['sample/key']).toString(), Number(features['image/class/label'].int64List!.value[0])]));
    expect(labels).toEqual({ 'train/0001': 1, 'train/0002': 0, 'train/0003': 1 });
    expect((await verifyDataset(dataset('cli-parts/'), { images: true })).problems).toEqual([]);
  });
});
