import { BUNDLED_SHARP } from '../../lambda/packing/preprocess/bundled-sharp';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { LocalDirectorySink, LocalDirectorySource } from '../../lambda/io/local-directory';
import { VersionLayout } from '../../lambda/packing/dataset-layout';
import { readImagePreprocessing, readPlanSettings } from '../../lambda/handler-kit/dataset-settings';
import type { PlanSummary } from '../../lambda/handler-kit/plan-layout';
import { RunFiles } from '../../lambda/handler-kit/plan-layout';
import { planDataset } from '../../lambda/shard-planner/plan-dataset';

/** The image preprocessing settings as the handlers read them from `IMAGE_PREPROCESSING` (issue 26). */
describe('IMAGE_PREPROCESSING', () => {
  test('is absent or empty: no preprocessing, and the plan settings carry none', () => {
    expect(readImagePreprocessing({})).toBeUndefined();
    expect(readImagePreprocessing({ IMAGE_PREPROCESSING: '' })).toBeUndefined();
    expect(readPlanSettings({ SHARD_FORMAT: 'tfrecord' })).not.toHaveProperty('preprocessing');
  });

  test('is read field by field into the settings the engine takes, and into the planner\'s settings', () => {
    // GIVEN
    const env = { SHARD_FORMAT: 'tfrecord', IMAGE_PREPROCESSING: '{"shorterSide":256,"longerSide":512,"jpegQuality":85,"keepGrayscale":true}' };
    // THEN
    const expected = { shorterSide: 256, longerSide: 512, jpegQuality: 85, keepGrayscale: true };
    expect(readImagePreprocessing(env)).toEqual(expected);
    expect(readPlanSettings(env).preprocessing).toEqual(expected);
    expect(readImagePreprocessing({ IMAGE_PREPROCESSING: '{"shorterSide":1}' })).toEqual({ shorterSide: 1 });
    expect(readImagePreprocessing({ IMAGE_PREPROCESSING: '{"longerSide":16384,"jpegQuality":100}' })).toEqual({ longerSide: 16384, jpegQuality: 100 });
  });

  test.each([
    ['not JSON', '{shorterSide: 256}', /IMAGE_PREPROCESSING must be a JSON object of shorterSide, longerSide, jpegQuality, keepGrayscale, got '\{shorterSide: 256\}'/],
    ['an array', '[256]', /IMAGE_PREPROCESSING must be a JSON object/],
    ['a misspelt field', '{"shortSide":256}', /IMAGE_PREPROCESSING has unknown field\(s\) shortSide; allowed: shorterSide, longerSide, jpegQuality, keepGrayscale/],
    ['a side of 0', '{"shorterSide":0}', /field shorterSide must be a whole number from 1 to 16384, got '\{"shorterSide":0\}'/],
    ['a side above 16,384', '{"longerSide":16385}', /field longerSide must be a whole number from 1 to 16384/],
    ['a fractional side', '{"shorterSide":256.5}', /field shorterSide must be a whole number/],
    ['a side as a string', '{"shorterSide":"256"}', /field shorterSide must be a whole number/],
    ['quality 0', '{"jpegQuality":0}', /field jpegQuality must be a whole number from 1 to 100/],
    ['quality 101', '{"jpegQuality":101}', /field jpegQuality must be a whole number from 1 to 100/],
    ['a longer side below the shorter', '{"shorterSide":512,"longerSide":256}', /field longerSide \(256\) must be at least shorterSide \(512\)/],
    ['keepGrayscale as a string', '{"keepGrayscale":"yes"}', /field keepGrayscale must be true or false/],
  ])('rejects %s, naming the variable, the value and what is allowed', (_what, value, message) => {
    expect(() => readImagePreprocessing({ IMAGE_PREPROCESSING: value })).toThrow(message);
  });
});

describe('the planner and the image preprocessing', () => {
  async function planWith(preprocessing: object | undefined): Promise<PlanSummary> {
    const sourceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'preprocess-plan-src-'));
    const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'preprocess-plan-out-'));
    for (const key of ['cat/1.jpg', 'dog/1.jpg']) {
      fs.mkdirSync(path.dirname(path.join(sourceDir, key)), { recursive: true });
      fs.writeFileSync(path.join(sourceDir, key), Buffer.alloc(100, 1));
    }
    const plan = await planDataset({
      source: new LocalDirectorySource(sourceDir), sink: new LocalDirectorySink(outDir),
      destination: { bucket: 'packed-bucket', prefix: 'packed/' },
      settings: { format: 'tfrecord', seed: 0, labels: 'folder', shardCount: 2, consumers: 1, ...(preprocessing ? { preprocessing } : {}) },
    });
    const planKey = new RunFiles(new VersionLayout(plan.datasetVersion)).planKey;
    return JSON.parse(fs.readFileSync(path.join(outDir, planKey), 'utf8')) as PlanSummary;
  }

  test('records the settings in the plan, which the finalizer hands to the manifest', async () => {
    // As the manifest records it: defaults filled in, and the versions of the sharp the packers ship.
    expect((await planWith({ shorterSide: 256, jpegQuality: 90 })).preprocessing).toEqual({
      shorterSide: 256, longerSide: null, jpegQuality: 90, keepGrayscale: false, sharp: BUNDLED_SHARP.sharp, libvips: BUNDLED_SHARP.vips,
    });
  });

  test('records none without them', async () => {
    expect(await planWith(undefined)).not.toHaveProperty('preprocessing');
  });
});
