import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { crc32c } from '@node-rs/crc32';
import { MANIFEST_KEY, VersionLayout } from '../../lambda/packing/dataset-layout';
import type { Feature } from '../../lambda/packing/formats';
import { decodeExample, encodedToBuffer, readTfRecords, shardFormat } from '../../lambda/packing/formats';
import { crc32Base64, crc32cBase64 } from '../../lambda/io/s3-checksum';
import type { Manifest } from '../../lambda/packing/manifest';
import { SAMPLE_KEY_FEATURE } from '../../lib/contract/sample-parts';
import { temporaryFolders, writeFiles } from '../support/local-files';
import { bytesOf, parsedRecords, SAMPLE_PARTS, sampleFiles } from '../support/multi-part-samples';
import { runCli } from '../support/run-cli';

const folder = temporaryFolders();

function manifestOf(output: string): Manifest {
  return JSON.parse(fs.readFileSync(path.join(output, MANIFEST_KEY), 'utf8')) as Manifest;
}

/** Each sample's label in the records, by its `sample/key`, and the features every record holds. */
function labelsBySample(output: string): { labels: Record<string, number>; features: string[][] } {
  const records = parsedRecords(manifestOf(output), (key) => fs.readFileSync(path.join(output, key)));
  return {
    labels: Object.fromEntries(records.map((features) => [bytesOf(features['sample/key']).toString(), Number(features['image/class/label'].int64List!.value[0])])),
    features: records.map((features) => Object.keys(features).sort()),
  };
}

/**
 * Writes each shard of a packed multi-part dataset again with the format writer, record by record, with
 * the parts `changes` gives a sample (`null`: the part left out) instead of the packed ones: a shard the
 * packer would never write, since it checks each part. The index files and the manifests' sizes and CRCs
 * follow, so that only the records differ from a sound dataset.
 */
function rewriteParts(output: string, changes: Readonly<Record<string, Readonly<Record<string, Buffer | null>>>>): void {
  const manifest = manifestOf(output);
  const description = manifest.sample!;
  const format = shardFormat('tfrecord');
  const one = (feature: Feature | undefined) => (feature && 'bytesList' in feature ? feature.bytesList[0] : undefined);
  for (const shard of manifest.shards) {
    const records = [...readTfRecords(fs.readFileSync(path.join(output, shard.key)))].map((record) => {
      const example = decodeExample(record.payload);
      const key = one(example[SAMPLE_KEY_FEATURE])!.toString();
      const label = example['image/class/label'];
      const parts = description.parts.flatMap(({ name }) => {
        const data = changes[key]?.[name] === undefined ? one(example[name === description.imagePart ? 'image/encoded' : name]) : changes[key][name];
        return data ? [{ name, data }] : [];
      });
      return encodedToBuffer(format.encode({
        data: Buffer.alloc(0), key, label: label && 'int64List' in label ? Number(label.int64List[0]) : -1, recordId: 0, parts, imagePart: description.imagePart,
      }));
    });
    const data = Buffer.concat(records);
    fs.writeFileSync(path.join(output, shard.key), data);
    let offset = 0;
    fs.writeFileSync(path.join(output, shard.indexKey), records.map((record) => {
      const line = format.indexLine(0, offset, record.length);
      offset += record.length;
      return line;
    }).join(''));
    Object.assign(shard, { bytes: data.length, crc32c: crc32cBase64(crc32c(data)), crc32: crc32Base64(zlibCrc32(data)) });
  }
  for (const key of [MANIFEST_KEY, new VersionLayout(manifest.datasetVersion).manifestKey]) {
    fs.writeFileSync(path.join(output, key), `${JSON.stringify(manifest, null, 2)}\n`);
  }
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

  test('a label file labels every part of a sample by its key: one label per record, an unlabelled sample one failure, stray rows counted once', async () => {
    // GIVEN: rows by sample key or by one part's file name; none for train/0004; two rows naming no sample
    const source = folder('src');
    writeFiles(source, {
      ...sampleFiles(['train/0001', 'train/0002', 'train/0003', 'train/0004']),
      'labels.csv': 'key,label\ntrain/0001,heron\ntrain/0002.jpg,egret\ntrain/0003.mask.png,heron\ntrain/0099,ibis\ntrain/0098.json,egret\n',
    });
    const flags = ['--label-file', path.join(source, 'labels.csv'), '--seed', '3'];
    const output = folder('out');

    // WHEN
    const strict = await runCli('pack', source, folder('out'), ...flags);
    const allowed = await runCli('pack', source, output, ...flags, '--allow-missing');
    const verified = await runCli('verify', output, '--images', '--allow-missing');

    // THEN: the sample without a row is one failure under its key, not one per part
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain('1 file(s) could not be packed: nothing was published');
    expect(strict.stdout).toContain("train/0004: no row of the label file file://");
    expect(allowed.code).toBe(0);
    const manifest = manifestOf(output);
    expect(manifest.failures).toEqual([{ key: 'train/0004', reason: expect.stringContaining("labels its sample 'train/0004': add a row for it (key,label: train/0004,<class>)") }]);
    expect(manifest).toMatchObject({ records: 3, labels: { egret: 0, heron: 1, ibis: 2 }, source: { objects: 12 }, sample: { samples: 4 } });
    // Five rows, of which two name no sample: counted once each, whatever the parts of the samples the others label.
    expect(manifest.labelSource).toMatchObject({ mode: 'file', rows: 5, unmatchedRows: 2 });
    expect(allowed.stdout).toMatch(/labels {5}file:\/\/.*labels\.csv: 5 samples labelled; warning: 2 row\(s\) name no listed file/);
    const { labels, features } = labelsBySample(output);
    expect(labels).toEqual({ 'train/0001': 1, 'train/0002': 0, 'train/0003': 1 });
    for (const names of features) expect(names).toEqual(['image/class/label', 'image/encoded', 'image/filename', 'image/format', 'json', 'mask.png', 'sample/key']);
    expect([verified.code, verified.stdout]).toEqual([0, expect.stringMatching(/^ok: \d+ shards, 3 records/m)]);
  });

  test('verify --images checks every part by its kind, in pack\'s words: a bad mask and a bad JSON part are problems, a sound rewrite is ok', async () => {
    // GIVEN: a packed dataset, and copies of it whose shard the format writer wrote again, sound and with bad parts
    const source = folder('src');
    writeFiles(source, sampleFiles(['cat/0001', 'cat/0002', 'dog/0003']));
    const packed = folder('out');
    expect((await runCli('pack', source, packed, '--shards', '1')).code).toBe(0);
    const [sound, broken, holed] = ['sound', 'broken', 'holed'].map((name) => {
      const copy = folder(name);
      fs.cpSync(packed, copy, { recursive: true });
      return copy;
    });
    rewriteParts(sound, {});
    rewriteParts(broken, { 'cat/0002': { 'mask.png': Buffer.from('not a png') }, 'dog/0003': { json: Buffer.from('{"boxes": [1, 2') } });
    rewriteParts(holed, { 'cat/0001': { json: null } });

    // WHEN
    const [soundPlain, soundImages, brokenPlain, brokenImages, holedPlain] = await Promise.all([
      runCli('verify', sound), runCli('verify', sound, '--images'), runCli('verify', broken), runCli('verify', broken, '--images'), runCli('verify', holed),
    ]);

    // THEN: the writer's rewrite is the packer's bytes; only --images reads the parts, each bad one named as pack names it
    expect(fs.readFileSync(path.join(sound, manifestOf(sound).shards[0].key)).equals(fs.readFileSync(path.join(packed, manifestOf(packed).shards[0].key)))).toBe(true);
    expect([soundPlain.code, soundImages.code, brokenPlain.code]).toEqual([0, 0, 0]);
    expect(brokenImages.code).toBe(1);
    const problems = brokenImages.stdout.split('\n').filter((line) => line.startsWith('problem: '));
    expect(problems).toHaveLength(2);
    expect(problems).toEqual(expect.arrayContaining([
      expect.stringMatching(/^problem: versions\/.*\.tfrecord: record at offset \d+ \(cat\/0002\): part 'mask\.png' \(cat\/0002\.mask\.png\): not an image \(no image format recognised in its bytes\)$/),
      expect.stringMatching(/^problem: versions\/.*\.tfrecord: record at offset \d+ \(dog\/0003\): part 'json' \(dog\/0003\.json\): not valid JSON \(/),
    ]));
    // A record without a required part is a problem with or without --images (the packer never writes one).
    expect(holedPlain.code).toBe(1);
    expect(holedPlain.stdout).toMatch(/record at offset \d+ \(cat\/0001\): lacks the required part 'json' \(required: jpg, json, mask\.png\)/);
  });

  test('a dataset without an image part (JSON and text) verifies: its records have no image/encoded, and need none', async () => {
    // GIVEN
    const source = folder('src');
    writeFiles(source, { 's/1.json': '{"a": 1}', 's/1.txt': 'one', 's/2.json': '[2]', 's/2.txt': 'two' });
    const output = folder('out');

    // WHEN
    const packed = await runCli('pack', source, output, '--labels', 'none', '--content', 'any');
    const verified = await runCli('verify', output, '--images');

    // THEN
    expect(packed.code).toBe(0);
    expect(manifestOf(output).sample).not.toHaveProperty('imagePart');
    expect([verified.code, verified.stdout]).toEqual([0, expect.stringMatching(/^ok: \d+ shards, 2 records/m)]);
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
