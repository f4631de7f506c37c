import type {
  RecordIoShardIndex} from '../../../lambda/packing/formats/index-files';
import {
  GlobalRecordIoIndex,
  mxnetIndexLine,
  parseMxnetIndex,
  parseTfRecordIndex,
  tfrecordIndexLine,
} from '../../../lambda/packing/formats/index-files';
import { readRecordIo } from '../../../lambda/packing/formats/recordio';
import { FormatError } from '../../../lambda/packing/formats/shard-format';
import { readTfRecords } from '../../../lambda/packing/formats/tfrecord';
import { readExternal } from './support';

describe('DALI TFRecord index', () => {
  test('indexes tensorflow-singles.tfrecords as tfrecord2idx does: "0 40 / 40 45 / 85 45"', () => {
    // WHEN
    const index = [...readTfRecords(readExternal('tensorflow-singles.tfrecords'))]
      .map((r) => tfrecordIndexLine(r.offset, r.size)).join('');
    // THEN
    expect(index).toBe('0 40\n40 45\n85 45\n');
  });

  test('parses what it writes', () => {
    // WHEN
    const entries = parseTfRecordIndex('0 40\n40 45\n85 45\n');
    // THEN
    expect(entries).toEqual([{ offset: 0, size: 40 }, { offset: 40, size: 45 }, { offset: 85, size: 45 }]);
  });

  test('parses an empty index as no records', () => {
    // WHEN / THEN
    expect(parseTfRecordIndex('')).toEqual([]);
  });

  test.each([
    ['0 40\n40\n', 2, '"40"'],
    ['0 40\n\n', 2, '""'],
    ['0\t40\n', 1, '"0\\t40"'],
    ['0 40\n40 -45\n', 2, '"40 -45"'],
    ['0 40\n40 45 7\n', 2, '"40 45 7"'],
    ['99999999999999999999 1\n', 1, '"99999999999999999999 1"'],
  ])('rejects %j naming line %d', (text, line, shown) => {
    // WHEN / THEN
    expect(() => parseTfRecordIndex(text)).toThrow(FormatError);
    expect(() => parseTfRecordIndex(text)).toThrow(`index line ${line}: expected "<offset> <size>", got ${shown}`);
  });
});

describe('MXNet index', () => {
  test('indexes dmlc-sample.rec as im2rec would: "1\\t0" … "10\\t468"', () => {
    // WHEN
    const records = [...readRecordIo(readExternal('dmlc-sample.rec'))];
    const index = records.map((r, i) => mxnetIndexLine(i + 1, r.offset)).join('');
    // THEN
    expect(index).toBe('1\t0\n2\t52\n3\t104\n4\t156\n5\t208\n6\t260\n7\t312\n8\t364\n9\t416\n10\t468\n');
  });

  test('parses what it writes', () => {
    // WHEN / THEN
    expect(parseMxnetIndex('1\t0\n2\t52\n')).toEqual([{ id: 1, offset: 0 }, { id: 2, offset: 52 }]);
  });

  test.each([
    ['1\t0\n2 52\n', 2],
    ['1\t0\n2\t\n', 2],
    ['x\t0\n', 1],
    ['1\t0\r\n', 1],
  ])('rejects %j naming line %d', (text, line) => {
    // WHEN / THEN
    expect(() => parseMxnetIndex(text)).toThrow(new RegExp(`^index line ${line}: expected "<id>\\\\t<offset>"`));
  });
});

/** The parts of the global index of `shards`, joined. */
function mergeRecordIoIndexes(shards: RecordIoShardIndex[]): string {
  const globalIndex = new GlobalRecordIoIndex();
  return shards.map((shard) => globalIndex.part(shard)).join('');
}

describe('GlobalRecordIoIndex', () => {
  test('shifts each shard\'s offsets by the sizes of the shards before it', () => {
    // GIVEN three shards of 100, 0 and 60 bytes
    const shards = [
      { records: [{ id: 0, offset: 0 }, { id: 1, offset: 52 }], bytes: 100 },
      { records: [], bytes: 0 },
      { records: [{ id: 2, offset: 0 }, { id: 3, offset: 20 }], bytes: 60 },
    ];
    // WHEN
    const merged = mergeRecordIoIndexes(shards);
    // THEN
    expect(merged).toBe('0\t0\n1\t52\n2\t100\n3\t120\n');
  });

  test('indexes dmlc-sample.rec twice over as one 1064-byte file', () => {
    // GIVEN the same shard listed twice
    const sample = readExternal('dmlc-sample.rec');
    const records = [...readRecordIo(sample)].map((r, i) => ({ id: i + 1, offset: r.offset }));
    // WHEN
    const merged = parseMxnetIndex(mergeRecordIoIndexes([{ records, bytes: sample.length }, { records, bytes: sample.length }]));
    // THEN every merged offset starts a record in the concatenation
    const concatenated = Buffer.concat([sample, sample]);
    const starts = [...readRecordIo(concatenated)].map((r) => r.offset);
    expect(merged.map((e) => e.offset)).toEqual(starts);
    expect(merged[10]).toEqual({ id: 1, offset: 532 });
  });

  test('gives an empty index for no shards', () => {
    // WHEN / THEN
    expect(mergeRecordIoIndexes([])).toBe('');
  });

  test('rejects a record that lies outside its shard', () => {
    // GIVEN
    const shards = [{ records: [{ id: 0, offset: 0 }], bytes: 10 }, { records: [{ id: 1, offset: 10 }], bytes: 10 }];
    // WHEN / THEN
    expect(() => mergeRecordIoIndexes(shards)).toThrow(/shard 1: record 1 at offset 10 lies outside its 10 bytes/);
  });
});
