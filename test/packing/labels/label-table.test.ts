import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MAX_LABEL_FILE_BYTES } from '../../../lib/contract/label-file';
import { LabelFileError, labelsByTable, readLabelTable } from '../../../lambda/packing/labels/label-table';
import { LabelledSource } from '../../../lambda/packing/labels/labelled-source';
import { readLocalLabelTable } from '../../../lambda/packing/labels/read-label-file';
import { listAll } from '../../../lambda/io/storage';
import type { ListedFile, PackingSource } from '../../../lambda/io/storage';

/** The bytes in chunks of `size`, as a stream hands them over (a chunk may end inside a character or a line). */
async function* chunked(text: string | Buffer, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

describe('readLabelTable', () => {
  test('JSON lines split anywhere, CRLF and multi-byte names read as whole lines; classes numbered in code-point order', async () => {
    // GIVEN
    const text = '{"key": "a/1.jpg", "label": "Zebra"}\r\n\n{"key": "a/2", "label": "äsche"}\r\n{"key": "b/3.mask.png", "label": "Zebra"}';

    // WHEN: one byte a chunk
    const table = await readLabelTable('s3://bucket/labels.jsonl', chunked(text, 1));

    // THEN
    expect(table.labelMap).toEqual({ Zebra: 0, äsche: 1 });
    expect(table.rows).toBe(3);
    expect([table.labelOfFile('a/1.jpg'), table.labelOfFile('a/2.json'), table.labelOfFile('b/3.png'), table.labelOfFile('c/4.jpg')]).toEqual([0, 1, 0, undefined]);
    expect(table.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  test('a CSV with a byte-order mark, quoted fields spanning lines and a class named __proto__', async () => {
    // GIVEN
    const text = '\ufeffkey,label\n"x/1","multi\nline"\nx/2,__proto__\n';

    // WHEN
    const table = await readLabelTable('file:///data/Labels.CSV', chunked(text, 7));

    // THEN
    expect(Object.keys(table.labelMap)).toEqual(['__proto__', 'multi\nline']);
    expect([table.labelOfFile('x/1.jpg'), table.labelOfFile('x/2.jpg')]).toEqual([1, 0]);
  });

  test('rows that name no listed file are counted, the first few named; the listing marks the rows it uses', async () => {
    // GIVEN
    const table = await readLabelTable('s3://b/l.csv', chunked('key,label\nk/1,a\nk/2,b\nk/3,a\n', 64));

    // WHEN
    table.labelOfFile('k/2.jpg');

    // THEN
    expect(table.unmatchedRows()).toEqual({ count: 2, first: ['k/1', 'k/3'] });
  });

  test('a file over the limit is refused as it is read, naming the limit: 512 MiB unless a test asks for less', async () => {
    // GIVEN: 4 MiB in 64 KiB chunks, under a 1 MiB limit (the default's rule, without reading 512 MiB in a test)
    const rows = '{"key": "k/1", "label": "a"}\n'.repeat(4 * 2 ** 20 / 29);

    // WHEN / THEN
    expect(MAX_LABEL_FILE_BYTES).toBe(512 * 2 ** 20);
    await expect(readLabelTable('s3://b/huge.jsonl', chunked(rows, 64 * 1024), 2 ** 20))
      .rejects.toThrow(/label file s3:\/\/b\/huge\.jsonl: more than that is over the 1 MiB a label file may have; refused before packing/);
  });

  test('a local file over 512 MiB is refused from its size, before a byte is read', async () => {
    // GIVEN: a sparse file, 513 MiB long, no data written
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'label-table-'));
    const file = path.join(dir, 'labels.csv');
    fs.writeFileSync(file, '');
    fs.truncateSync(file, MAX_LABEL_FILE_BYTES + 2 ** 20);

    // WHEN / THEN
    try {
      await expect(readLocalLabelTable(file)).rejects.toThrow(/labels\.csv: 513\.0 MiB is over the 512 MiB a label file may have/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test.each([
    ['an empty CSV', 'l.csv', '', /l\.csv is empty: expected the header key,label/],
    ['a header only', 'l.csv', 'key,label\n', /l\.csv has no rows/],
    ['an empty key', 'l.jsonl', '{"key": "", "label": "a"}\n', /l\.jsonl line 1: key must be the sample's path below the source, a non-empty string .*got ""/],
    ['a key that is not a string', 'l.jsonl', '{"key": 7, "label": "a"}\n', /line 1: key must be .*got 7/],
    ['JSON nested too deep', 'l.jsonl', `${'['.repeat(100)}${']'.repeat(100)}\n`, /line 1: JSON nested more than 64 levels deep/],
    ['an unknown extension', 'l.tsv', 'key\tlabel\n', /label file s3:\/\/b\/l\.tsv: the name must end in '\.csv' or '\.jsonl'/],
  ])('%s is a LabelFileError naming the file', async (_, name, text, message) => {
    const reading = readLabelTable(`s3://b/${name}`, chunked(text, 5));
    await expect(reading).rejects.toThrow(LabelFileError);
    await expect(readLabelTable(`s3://b/${name}`, chunked(text, 5))).rejects.toThrow(message);
  });
});

describe('LabelledSource and labelsByTable', () => {
  const files = (keys: string[]): ListedFile[] => keys.map((key) => ({ key, size: 1, modified: 0 }));
  const source = (keys: string[]): PackingSource => ({
    uri: 's3://b/raw/',
    async *list() {
      yield files(keys);
    },
    read: () => Promise.reject(new Error('not read')),
  });

  test('keeps the labelled files, lists the others as failures with their sample, and leaves the label file itself out', async () => {
    // GIVEN
    const table = await readLabelTable('s3://b/raw/meta/labels.csv', chunked('key,label\nt/1,a\nt/2,b\n', 64));
    const labelled = new LabelledSource(source(['t/1.jpg', 't/1.json', 't/2.jpg', 't/3.jpg', 'meta/labels.csv']), table);

    // WHEN
    const listed = await listAll(labelled);

    // THEN
    expect(listed.map((file) => file.key)).toEqual(['t/1.jpg', 't/1.json', 't/2.jpg']);
    expect(labelled.unlabelled).toEqual([{ key: 't/3.jpg', reason: expect.stringMatching(/^no row of the label file s3:\/\/b\/raw\/meta\/labels\.csv labels its sample 't\/3'/) }]);
    expect([...labelsByTable(listed, table)]).toEqual([0, 0, 1]);
    expect(() => labelsByTable(files(['t/3.jpg']), table)).toThrow(/no row of the label file .* labels 't\/3\.jpg' \(its sample 't\/3'\)/);
  });
});
