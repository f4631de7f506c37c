import * as fs from 'node:fs';
import * as path from 'node:path';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import type { Manifest } from '../../lambda/packing/manifest';
import { temporaryFolders, writeFiles } from '../support/local-files';
import { bytesOf, parsedRecords, SAMPLE_PARTS, sampleFiles } from '../support/multi-part-samples';
import { runCli } from '../support/run-cli';

const folder = temporaryFolders();

function manifestOf(output: string): Manifest {
  return JSON.parse(fs.readFileSync(path.join(output, MANIFEST_KEY), 'utf8')) as Manifest;
}

describe('training-io pack with multi-part samples (issue 48)', () => {
  test('a folder of <key>.jpg + <key>.json + <key>.mask.png packs one record per sample, every part read back by TensorFlow\'s schema', async () => {
    // GIVEN
    const source = folder('src');
    writeFiles(source, sampleFiles(['cat/0001', 'cat/0002', 'dog/0003']));
    const output = folder('out');

    // WHEN
    const run = await runCli('pack', source, output, '--seed', '3');

    // THEN
    expect([run.code, run.stderr]).toEqual([0, expect.any(String)]);
    const manifest = manifestOf(output);
    expect(manifest.sample).toEqual({
      parts: [{ name: 'jpg', kind: 'image' }, { name: 'json', kind: 'json' }, { name: 'mask.png', kind: 'image' }],
      required: ['jpg', 'json', 'mask.png'],
      imagePart: 'jpg',
      samples: 3,
    });
    expect([manifest.records, manifest.source.objects, manifest.failures]).toEqual([3, 9, []]);
    const records = parsedRecords(manifest, (key) => fs.readFileSync(path.join(output, key)));
    const byKey = new Map(records.map((features) => [bytesOf(features['sample/key']).toString(), features]));
    expect([...byKey.keys()].sort()).toEqual(['cat/0001', 'cat/0002', 'dog/0003']);
    for (const [key, features] of byKey) {
      expect(Object.keys(features).sort()).toEqual(['image/class/label', 'image/encoded', 'image/filename', 'image/format', 'json', 'mask.png', 'sample/key']);
      expect(bytesOf(features['image/encoded']).equals(SAMPLE_PARTS.jpg)).toBe(true);
      expect(bytesOf(features['image/filename']).toString()).toBe(`${key}.jpg`);
      expect(bytesOf(features['image/format']).toString()).toBe('jpeg');
      expect(Number(features['image/class/label'].int64List!.value[0])).toBe(key.startsWith('cat/') ? 0 : 1);
      expect(JSON.parse(bytesOf(features.json).toString())).toEqual({ key, boxes: [[1, 2, 30, 20]] });
      expect(bytesOf(features['mask.png']).equals(SAMPLE_PARTS.png)).toBe(true);
    }
  });

  test('a sample missing a part, a JSON part that does not parse and a bad image part are listed failures; nothing is published without --allow-missing', async () => {
    // GIVEN
    const source = folder('src');
    writeFiles(source, {
      ...sampleFiles(['s/good-1', 's/good-2', 's/no-mask', 's/bad-json', 's/bad-mask']),
      's/bad-json.json': '{"boxes": [1, 2',
      's/bad-mask.mask.png': 'not a png at all',
    });
    fs.rmSync(path.join(source, 's', 'no-mask.mask.png'));

    // WHEN
    const strict = await runCli('pack', source, folder('out'), '--labels', 'none');
    const output = folder('out');
    const allowed = await runCli('pack', source, output, '--labels', 'none', '--allow-missing');

    // THEN
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain('3 file(s) could not be packed: nothing was published');
    expect(allowed.code).toBe(0);
    const manifest = manifestOf(output);
    expect(manifest.failures.map((failure) => failure.key)).toEqual(['s/bad-json', 's/bad-mask', 's/no-mask']);
    const [badJson, badMask, noMask] = manifest.failures.map((failure) => failure.reason);
    expect(badJson).toMatch(/^part 'json' \(s\/bad-json\.json\): not valid JSON \(/);
    expect(badMask).toBe("part 'mask.png' (s/bad-mask.mask.png): not an image (no image format recognised in its bytes)");
    expect(noMask).toMatch(/^sample lacks part 'mask\.png' \(required: jpg, json, mask\.png; it has s\/no-mask\.jpg, s\/no-mask\.json\)/);
    expect(allowed.stdout).toMatch(/s\/no-mask: sample lacks part 'mask\.png'/);
    expect(manifest.records).toBe(2);
    expect(manifest.sample?.samples).toBe(5);
    const keys = parsedRecords(manifest, (key) => fs.readFileSync(path.join(output, key))).map((features) => bytesOf(features['sample/key']).toString());
    expect(keys.sort()).toEqual(['s/good-1', 's/good-2']);
  });

  test('--parts names the required parts: a sample without an optional part packs, and without a required one fails', async () => {
    // GIVEN
    const source = folder('src');
    writeFiles(source, { ...sampleFiles(['s/full']), 's/bare.jpg': SAMPLE_PARTS.jpg, 's/bare.json': '{}', 's/lonely.jpg': SAMPLE_PARTS.jpg });
    const output = folder('out');

    // WHEN
    const run = await runCli('pack', source, output, '--labels', 'none', '--parts', 'jpg,json', '--allow-missing');

    // THEN
    expect(run.code).toBe(0);
    const manifest = manifestOf(output);
    expect(manifest.sample?.required).toEqual(['jpg', 'json']);
    expect(manifest.failures).toEqual([{ key: 's/lonely', reason: expect.stringMatching(/^sample lacks part 'json' \(required: jpg, json;/) }]);
    const records = parsedRecords(manifest, (key) => fs.readFileSync(path.join(output, key)));
    const parts = new Map(records.map((features) => [bytesOf(features['sample/key']).toString(), Object.keys(features).sort()]));
    expect(parts.get('s/bare')).toEqual(['image/encoded', 'image/filename', 'image/format', 'json', 'sample/key']);
    expect(parts.get('s/full')).toContain('mask.png');
  });

  test('RecordIO refuses multi-part samples, naming the format that takes them; so does --resize', async () => {
    // GIVEN
    const source = folder('src');
    writeFiles(source, sampleFiles(['s/0001']));

    // WHEN
    const recordio = await runCli('pack', source, folder('out'), '--format', 'recordio');
    const resized = await runCli('pack', source, folder('out'), '--resize', '64');

    // THEN
    expect(recordio.code).toBe(2);
    expect(recordio.stderr).toMatch(/s\/0001: a sample of 3 parts \(jpg, json, mask\.png\) cannot be a RecordIO record.*--format tfrecord/);
    expect(resized.code).toBe(2);
    expect(resized.stderr).toMatch(/image preprocessing \(--resize, --max-side; ShardedDataset imagePreprocessing\) cannot be used with multi-part samples/);
  });

  test('a classification folder with a stray pair sharing a key (x.jpg beside x.png) packs every file as its own record, as before samples', async () => {
    // GIVEN
    const source = folder('src');
    writeFiles(source, {
      'cat/1.jpg': SAMPLE_PARTS.jpg, 'cat/2.jpg': SAMPLE_PARTS.jpg, 'dog/3.jpg': SAMPLE_PARTS.jpg,
      'dog/4.jpg': SAMPLE_PARTS.jpg, 'dog/4.png': SAMPLE_PARTS.png,
    });
    const output = folder('out');

    // WHEN
    const run = await runCli('pack', source, output);

    // THEN
    expect([run.code, run.stderr]).toEqual([0, expect.any(String)]);
    const manifest = manifestOf(output);
    expect(manifest).not.toHaveProperty('sample');
    expect([manifest.records, manifest.source.objects, manifest.failures]).toEqual([5, 5, []]);
  });

  test('when no sample is complete the run says what the samples lack, not that the source is empty', async () => {
    // GIVEN: most samples are multi-part, and --parts names one that none has.
    const source = folder('src');
    writeFiles(source, sampleFiles(['s/0001', 's/0002']));

    // WHEN
    const run = await runCli('pack', source, folder('out'), '--labels', 'none', '--parts', 'jpg,txt', '--allow-missing');

    // THEN
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/no sample is complete: all 2 samples are failures \(2 lack part 'txt'; required: jpg, txt\)/);
    expect(run.stderr).not.toMatch(/files is empty/);
  });

  test('--parts with one part groups a set where fewer than half the samples have several files: that part required, the others packed where present', async () => {
    // GIVEN: a caption for one image of three.
    const source = folder('src');
    writeFiles(source, { 's/1.jpg': SAMPLE_PARTS.jpg, 's/1.txt': 'a red box', 's/2.jpg': SAMPLE_PARTS.jpg, 's/3.jpg': SAMPLE_PARTS.jpg });
    const output = folder('out');

    // WHEN
    const run = await runCli('pack', source, output, '--labels', 'none', '--parts', 'jpg');

    // THEN
    expect([run.code, run.stderr]).toEqual([0, expect.any(String)]);
    const manifest = manifestOf(output);
    expect(manifest.sample).toEqual({ parts: [{ name: 'jpg', kind: 'image' }, { name: 'txt', kind: 'text' }], required: ['jpg'], imagePart: 'jpg', samples: 3 });
    const records = parsedRecords(manifest, (key) => fs.readFileSync(path.join(output, key)));
    const captions = new Map(records.map((features) => [bytesOf(features['sample/key']).toString(), features.txt && bytesOf(features.txt).toString()]));
    expect(captions).toEqual(new Map([['s/1', 'a red box'], ['s/2', undefined], ['s/3', undefined]]));
  });

  test('--parts refuses a part named twice, naming the flag', async () => {
    const run = await runCli('pack', folder('src'), folder('out'), '--parts', 'jpg,jpg');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--parts must name one or more distinct parts/);
  });
});
