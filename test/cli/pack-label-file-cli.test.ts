import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Manifest } from '../../lambda/packing/manifest';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import { seededBytes, temporaryFolders, writeFiles } from '../support/local-files';
import { recordLabels } from '../support/record-labels';
import { runCli } from '../support/run-cli';

// --labels file --label-file PATH: labels from a CSV or JSON-lines file beside the data, on a local folder.

const folder = temporaryFolders();

/** Six samples in one flat folder (no class folders), and a label file written beside them. */
function sourceWith(labelFileName: string, labelFile: string): string {
  const dir = folder('src');
  const files: Record<string, Buffer> = { [labelFileName]: Buffer.from(labelFile) };
  for (let i = 0; i < 6; i++) files[`train/${i}.bin`] = seededBytes(`labels/${i}`, 200 + 31 * i);
  writeFiles(dir, files);
  return dir;
}

function manifestOf(output: string): Manifest {
  return JSON.parse(fs.readFileSync(path.join(output, MANIFEST_KEY), 'utf8')) as Manifest;
}

const CSV = [
  'key,label,note',
  'train/0,dog,',
  'train/1.bin,cat,"taken outdoors, at noon"',
  '"train/2",cat,"a ""quoted"" note"',
  'train/3,"zebra, plains",',
  'train/4,dog,',
  'train/5,cat,',
  'train/6,eel,no such file',
  '',
].join('\r\n');

describe('training-io pack --labels file', () => {
  test('a CSV label file beside the data labels each sample: classes sorted, quoting per RFC 4180, the file itself left out', async () => {
    // GIVEN
    const source = sourceWith('labels.csv', CSV);
    const output = path.join(folder('out'), 'dataset');

    // WHEN: --label-file alone asks for labels 'file'
    const packed = await runCli('pack', '--content', 'any', source, output, '--label-file', path.join(source, 'labels.csv'));

    // THEN
    expect(packed.code).toBe(0);
    const manifest = manifestOf(output);
    expect(manifest.labels).toEqual({ 'cat': 0, 'dog': 1, 'eel': 2, 'zebra, plains': 3 });
    expect(manifest).toMatchObject({ classes: 4, records: 6, failures: [], source: { objects: 6 } });
    expect(manifest.labelSource).toEqual({
      mode: 'file', file: `file://${path.join(source, 'labels.csv')}`, sha256: expect.stringMatching(/^[0-9a-f]{64}$/), rows: 7, unmatchedRows: 1,
    });
    const labels = await recordLabels(manifest, (key) => fs.readFileSync(path.join(output, key)));
    expect(labels).toEqual({ 'train/0.bin': 1, 'train/1.bin': 0, 'train/2.bin': 0, 'train/3.bin': 3, 'train/4.bin': 1, 'train/5.bin': 0 });
    expect(packed.stdout).toMatch(/labels {5}file:\/\/.*labels\.csv: 7 samples labelled; warning: 1 row\(s\) name no listed file/);
    expect((await runCli('verify', output)).code).toBe(0);
  });

  test('JSON lines give the same labels; rerun unchanged is up to date, a changed label file packs everything again', async () => {
    // GIVEN
    const rows = ['train/0', 'train/1', 'train/2', 'train/3', 'train/4', 'train/5'].map((key, i) => JSON.stringify({ key, label: i % 2 ? 'odd' : 'even' }));
    const source = sourceWith('meta/labels.jsonl', `${rows.join('\n')}\n`);
    const output = path.join(folder('out'), 'dataset');
    const pack = () => runCli('pack', '--content', 'any', source, output, '--labels', 'file', '--label-file', path.join(source, 'meta/labels.jsonl'));

    // WHEN
    const first = await pack();
    const again = await pack();
    fs.writeFileSync(path.join(source, 'meta/labels.jsonl'), `${rows.map((row) => row.replace('"odd"', '"even"')).join('\n')}\n`);
    const changed = await pack();

    // THEN
    expect([first.code, again.code, changed.code]).toEqual([0, 0, 0]);
    expect(again.stdout).toContain('already current');
    expect(changed.stdout).toContain('the label file file://');
    const manifest = manifestOf(output);
    expect(manifest.labels).toEqual({ even: 0 });
    expect(Object.values(await recordLabels(manifest, (key) => fs.readFileSync(path.join(output, key))))).toEqual([0, 0, 0, 0, 0, 0]);
  });

  test('a file no row labels is a listed failure with its reason: nothing published without --allow-missing, published with it', async () => {
    // GIVEN: no row for train/5
    const source = sourceWith('labels.csv', 'key,label\ntrain/0,a\ntrain/1,b\ntrain/2,a\ntrain/3,b\ntrain/4,a\n');
    const output = path.join(folder('out'), 'dataset');
    const args = ['pack', '--content', 'any', source, output, '--label-file', path.join(source, 'labels.csv')];

    // WHEN
    const refused = await runCli(...args);
    const publishedWhenRefused = fs.existsSync(path.join(output, MANIFEST_KEY));
    const allowed = await runCli(...args, '--allow-missing');

    // THEN
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('train/5.bin: no row of the label file file://');
    expect(publishedWhenRefused).toBe(false);
    expect(allowed.code).toBe(0);
    const manifest = manifestOf(output);
    expect(manifest).toMatchObject({ records: 5, source: { objects: 6 }, labelSource: { unmatchedRows: 0 } });
    expect(manifest.failures).toEqual([{ key: 'train/5.bin', reason: expect.stringContaining("labels its sample 'train/5'") }]);
  });

  test.each([
    ['two labels for one sample', 'labels.csv', 'key,label\ntrain/0,cat\ntrain/1,dog\ntrain/0.bin,dog\n',
      /labels\.csv line 4: sample 'train\/0' is labelled 'dog', but line 2 labels it 'cat'/],
    ['an empty label', 'labels.csv', 'key,label\ntrain/0,cat\ntrain/1,\n', /labels\.csv line 3: label of 'train\/1' must be a class name, a non-empty string .* got ""/],
    ['a row with a field too many', 'labels.csv', 'key,label\ntrain/0,cat\ntrain/1,dog,extra\n', /labels\.csv: Invalid Record Length: expect 2, got 3 on line 3; expected a CSV/],
    ['an unclosed quote', 'labels.csv', 'key,label\n"train/0,cat\n', /labels\.csv: .*Quote Not Closed.*RFC 4180/],
    ['a header without the label column', 'labels.csv', 'path,class\ntrain/0,cat\n', /labels\.csv line 1: the header must name the columns 'key' and 'label'/],
    ['a JSON line that is not an object', 'labels.jsonl', '{"key": "train/0", "label": "cat"}\n["train/1", "dog"]\n', /labels\.jsonl line 2: expected a JSON object/],
    ['a JSON label that is a number', 'labels.jsonl', '{"key": "train/0", "label": 3}\n', /labels\.jsonl line 1: label of 'train\/0' must be a class name, .* got 3/],
    ['malformed JSON', 'labels.jsonl', '{"key": "train/0", "label": "cat"\n', /labels\.jsonl line 1: .*expected one JSON object a line/],
    ['another extension', 'labels.txt', 'train/0 cat\n', /--label-file ".*labels\.txt" must end in '\.csv' or '\.jsonl'/],
  ])('%s stops the run before anything is written, naming the file, the line and what is allowed (exit 2)', async (_, name, contents, message) => {
    // GIVEN
    const source = sourceWith(name, contents);
    const output = path.join(folder('out'), 'dataset');

    // WHEN
    const run = await runCli('pack', '--content', 'any', source, output, '--label-file', path.join(source, name));

    // THEN
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(fs.existsSync(output)).toBe(false);
  });

  test.each([
    [['--labels', 'file'], /--labels 'file' takes the labels from a label file: give --label-file/],
    [['--labels', 'none', '--label-file', 'labels.csv'], /--label-file is read with --labels 'file' only, got --labels "none"/],
    [['--label-file', 'missing.csv'], /label file .*missing\.csv cannot be read: ENOENT/],
  ])('%j is a usage error', async (flags, message) => {
    // GIVEN
    const source = sourceWith('labels.csv', 'key,label\ntrain/0,cat\n');

    // WHEN
    const run = await runCli('pack', '--content', 'any', source, path.join(folder('out'), 'dataset'), ...flags);

    // THEN
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
  });
});
