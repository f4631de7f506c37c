import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readPlanSettings } from '../../lambda/handler-kit/dataset-settings';
import type { ShardTask } from '../../lambda/handler-kit/plan-layout';
import { RunFiles } from '../../lambda/handler-kit/plan-layout';
import { MANIFEST_KEY, VersionLayout } from '../../lambda/packing/dataset-layout';
import { LocalDirectorySink, LocalDirectorySource } from '../../lambda/io/local-directory';
import { BUNDLED_SHARP } from '../../lambda/packing/preprocess/bundled-sharp';
import { finalizeShards } from '../../lambda/shard-finalizer/finalize-shards';
import { packShard } from '../../lambda/shard-packer/pack-shard';
import { planDataset } from '../../lambda/shard-planner/plan-dataset';
import { datasetObjects, expectSameObjects } from '../support/dataset-objects';
import { temporaryFolders, writeFiles } from '../support/local-files';

/**
 * The Lambda handlers' path with image preprocessing (issue 26), end to end over local folders:
 * the planner reads `IMAGE_PREPROCESSING` as the construct renders it, the packers resize, the
 * finalizer records what was done, and Pillow (not sharp) reads every record back at the size
 * promised. The bundled packer's own sharp is checked by test/package.
 */

const REPO = path.resolve(__dirname, '../..');
const FIXTURES = path.join(REPO, 'test/fixtures/images/preprocess');
const DESCRIBE = path.join(REPO, 'test/packing/preprocess/describe_records.py');
const PYTHON = process.env.PYTHON ?? (fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const folder = temporaryFolders();

async function runHandlers(sourceDir: string, outDir: string, environment: Record<string, string>, imagesInFlight?: number) {
  const settings = readPlanSettings({ SHARD_FORMAT: 'tfrecord', SHARD_COUNT: '2', ...environment });
  const source = new LocalDirectorySource(sourceDir);
  const sink = new LocalDirectorySink(outDir);
  const plan = await planDataset({ source, sink, destination: { bucket: 'packed', prefix: '' }, settings });
  if (plan.upToDate) return { plan };
  const tasks = JSON.parse(fs.readFileSync(path.join(outDir, new RunFiles(new VersionLayout(plan.datasetVersion)).tasksKey), 'utf8')) as ShardTask[];
  for (const task of tasks) {
    await packShard(task, { source, sink, format: 'tfrecord', readConcurrency: 4, preprocessing: settings.preprocessing, imagesInFlight });
  }
  const result = await finalizeShards({ datasetVersion: plan.datasetVersion, shardCount: plan.shardCount, fingerprint: plan.source.fingerprint }, sink, 7, true);
  return { plan, result };
}

describe('the shard handlers with IMAGE_PREPROCESSING', () => {
  test('plan → pack → finalize resizes every image, lists the undecodable ones, and records what was done', async () => {
    // GIVEN the encoders' fixture files (120 × 80 and 80 × 120 px), one truncated and one text file among them
    const sourceDir = folder('src');
    writeFiles(sourceDir, Object.fromEntries(fs.readdirSync(FIXTURES).filter((name) => !/\.(py|js|md)$/.test(name))
      .map((name) => [`photos/${name}`, fs.readFileSync(path.join(FIXTURES, name))])));
    const outDir = folder('out');

    // WHEN
    const { result } = await runHandlers(sourceDir, outDir, { IMAGE_PREPROCESSING: JSON.stringify({ shorterSide: 40, jpegQuality: 85 }) });

    // THEN the manifest says what was done, with the packer's sharp, and lists the two files that do not decode
    const manifest = JSON.parse(fs.readFileSync(path.join(outDir, MANIFEST_KEY), 'utf8'));
    expect(manifest.preprocessing).toEqual({
      shorterSide: 40, longerSide: null, jpegQuality: 85, keepGrayscale: false, sharp: BUNDLED_SHARP.sharp, libvips: BUNDLED_SHARP.vips,
    });
    expect(manifest.failures.map((failure: { key: string }) => failure.key)).toEqual(['photos/pillow-truncated.jpg', 'photos/text-named.jpg']);
    expect(result).toMatchObject({ records: 12, failures: 2 });
    // and Pillow reads every record as an RGB JPEG whose shorter side is 40 pixels
    const run = spawnSync(PYTHON, [DESCRIBE, outDir], { encoding: 'utf8', env: { ...process.env, PYTHONPATH: path.join(REPO, 'container') } });
    expect(run.stderr).toBe('');
    const records = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { filename: string; decodedFormat: string; width: number; height: number; channels: number });
    expect(records).toHaveLength(12);
    for (const record of records) {
      expect({ file: record.filename, format: record.decodedFormat, shorter: Math.min(record.width, record.height), channels: record.channels })
        .toEqual({ file: record.filename, format: 'JPEG', shorter: 40, channels: 3 });
    }

    // WHEN packed again by packers that resize six images at once (a packer of 6 vCPUs)
    const wider = folder('out-wider');
    await runHandlers(sourceDir, wider, { IMAGE_PREPROCESSING: JSON.stringify({ shorterSide: 40, jpegQuality: 85 }) }, 6);
    // THEN the same bytes: images in flight change the speed, never the records or their order
    expectSameObjects(await datasetObjects(new LocalDirectorySink(wider)), await datasetObjects(new LocalDirectorySink(outDir)));

    // WHEN the planner runs again with the same settings, then with another quality
    const again = await runHandlers(sourceDir, outDir, { IMAGE_PREPROCESSING: JSON.stringify({ shorterSide: 40, jpegQuality: 85 }) });
    const changed = await runHandlers(sourceDir, outDir, { IMAGE_PREPROCESSING: JSON.stringify({ shorterSide: 40, jpegQuality: 70 }) });
    // THEN the first is up to date, the second packs everything again and says why
    expect(again.plan.upToDate).toBe(true);
    expect(changed.plan).toMatchObject({ upToDate: false, reusedShards: 0 });
    expect(changed.plan.fullRepackReason).toMatch(/image preprocessing changed/);
  });
});
