import { encodedToBuffer } from '../../../lambda/packing/formats/encoded';
import { decodeExample } from '../../../lambda/packing/formats/example';
import { imageFormatOf } from '../../../lambda/packing/formats/image-format';
import { shardFormat } from '../../../lambda/packing/formats/index';
import { unpackImageRecord } from '../../../lambda/packing/formats/ir-header';
import { readRecordIo } from '../../../lambda/packing/formats/recordio';
import { recordioFormat } from '../../../lambda/packing/formats/recordio-format';
import type { RecordInput, ShardFormat, ShardFormatName } from '../../../lambda/packing/formats/shard-format';
import { FormatError } from '../../../lambda/packing/formats/shard-format';
import { readTfRecords } from '../../../lambda/packing/formats/tfrecord';
import { tfrecordFormat } from '../../../lambda/packing/formats/tfrecord-format';
import { randomBytes, readExternal, seededRandom } from './support';

/** Writes inputs as one shard the way the shard writer does: records framed back to back in one buffer, one index line each. */
function writeShard(format: ShardFormat, inputs: RecordInput[]): { shard: Buffer; index: string } {
  const records = inputs.map((input) => format.encode(input));
  const shard = Buffer.alloc(records.reduce((sum, record) => sum + record.size, 0));
  const lines: string[] = [];
  let offset = 0;
  records.forEach((record, i) => {
    lines.push(format.indexLine(inputs[i].recordId, offset, record.size));
    record.writeTo(shard, offset);
    offset += record.size;
  });
  return { shard, index: lines.join('') };
}

function randomInputs(seed: number, count: number): RecordInput[] {
  const random = seededRandom(seed);
  const names = ['cat/0001.jpg', 'dog/Ünïcödé 犬.png', 'bird/x.JPEG', 'noext', 'fish/🐟.webp'];
  return Array.from({ length: count }, (_, i) => ({
    data: randomBytes(random, Math.floor(random() * 20_000)),
    key: `${i}/${names[i % names.length]}`,
    label: i % 3 === 0 ? -1 : Math.floor(random() * 1000),
    recordId: 1000 + i,
  }));
}

describe('shardFormat', () => {
  test.each([
    ['tfrecord', tfrecordFormat, '.tfrecord'],
    ['recordio', recordioFormat, '.rec'],
  ])('returns the %s format', (name, format, extension) => {
    // WHEN
    const found = shardFormat(name as ShardFormatName);
    // THEN
    expect(found).toBe(format);
    expect(found.name).toBe(name);
    expect(found.extension).toBe(extension);
  });

  test('rejects an unknown name from untyped input', () => {
    // WHEN / THEN
    expect(() => shardFormat('webdataset' as ShardFormatName)).toThrow(/shard format must be 'tfrecord' or 'recordio', got "webdataset"/);
  });
});

describe('tfrecordFormat', () => {
  test('writes an image Example per file and indexes it as "<offset> <size>"', () => {
    // GIVEN
    const inputs = randomInputs(11, 50);
    // WHEN
    const { shard, index } = writeShard(tfrecordFormat, inputs);
    // THEN
    const records = [...readTfRecords(shard)];
    expect(index).toBe(records.map((r) => `${r.offset} ${r.size}\n`).join(''));
    records.forEach((record, i) => {
      const input = inputs[i];
      const features = decodeExample(record.payload);
      expect(features['image/encoded']).toEqual({ bytesList: [input.data] });
      expect(features['image/filename']).toEqual({ bytesList: [Buffer.from(input.key, 'utf8')] });
      expect(features['image/format']).toEqual({ bytesList: [Buffer.from(imageFormatOf(input.key))] });
      expect(features['image/class/label']).toEqual(input.label === -1 ? undefined : { int64List: [input.label] });
    });
  });

  test('frames a large file whole: one record of the announced size holding the file', () => {
    // GIVEN
    const data = randomBytes(seededRandom(12), 150_000);
    // WHEN
    const shard = encodedToBuffer(tfrecordFormat.encode({ data, key: 'a.jpg', label: 1, recordId: 0 }));
    // THEN
    const records = [...readTfRecords(shard)];
    expect(records.map((r) => r.size)).toEqual([shard.length]);
    expect(decodeExample(records[0].payload)['image/encoded']).toEqual({ bytesList: [data] });
  });

  test('is deterministic', () => {
    // GIVEN
    const inputs = randomInputs(13, 20);
    // WHEN / THEN
    expect(writeShard(tfrecordFormat, inputs)).toEqual(writeShard(tfrecordFormat, inputs));
  });
});

describe('recordioFormat', () => {
  test('writes IRHeader (flag 0, label, id = record id, id2 0) + the file and indexes "<id>\\t<offset>"', () => {
    // GIVEN
    const inputs = randomInputs(21, 50);
    // WHEN
    const { shard, index } = writeShard(recordioFormat, inputs);
    // THEN
    const records = [...readRecordIo(shard)];
    expect(index).toBe(records.map((r, i) => `${inputs[i].recordId}\t${r.offset}\n`).join(''));
    records.forEach((record, i) => {
      const image = unpackImageRecord(record.payload);
      expect(image.header).toEqual({ flag: 0, label: inputs[i].label, id: inputs[i].recordId, id2: 0 });
      expect(image.data).toEqual(inputs[i].data);
    });
  });

  test('writes dmlc-sample.rec byte for byte from its contents', () => {
    // GIVEN
    const inputs = Array.from({ length: 10 }, (_, index) => ({
      data: Buffer.from(`${index + 1}\n`.repeat(10)), key: `${index + 1}.txt`, label: (index + 1) % 2, recordId: index + 1,
    }));
    // WHEN
    const { shard, index } = writeShard(recordioFormat, inputs);
    // THEN
    expect(shard).toEqual(readExternal('dmlc-sample.rec'));
    expect(index.split('\n')[9]).toBe('10\t468');
  });

  test('keeps -1 in the header for unlabeled files', () => {
    // WHEN
    const record = encodedToBuffer(recordioFormat.encode({ data: Buffer.from('x'), key: 'x', label: -1, recordId: 0 }));
    // THEN
    expect(unpackImageRecord([...readRecordIo(record)][0].payload).header.label).toBe(-1);
  });

  test('escapes a magic word in the file at an aligned offset', () => {
    // GIVEN the magic at file offset 4, i.e. payload offset 28
    const data = Buffer.concat([Buffer.from('abcd'), Buffer.from([0x0a, 0x23, 0xd7, 0xce]), Buffer.from('efgh')]);
    // WHEN
    const encoded = encodedToBuffer(recordioFormat.encode({ data, key: 'm', label: 0, recordId: 1 }));
    // THEN
    expect(encoded.readUInt32LE(4)).toBe((1 << 29) | 28);
    expect(unpackImageRecord([...readRecordIo(encoded)][0].payload).data).toEqual(data);
  });

  test.each([
    ['a record id whose low 32 bits are the magic word', { recordId: 0xced7230a }, /k\.jpg: record id 3470205706 contains the RecordIO magic word/],
    ['a label float32 cannot hold', { label: 2 ** 24 + 1 }, /k\.jpg: label 16777217 is not exactly representable/],
  ])('rejects %s with a FormatError naming the key', (_what, change, message) => {
    // GIVEN
    const input = { data: Buffer.from('x'), key: 'k.jpg', label: 0, recordId: 0, ...change };
    // WHEN / THEN
    expect(() => recordioFormat.encode(input)).toThrow(FormatError);
    expect(() => recordioFormat.encode(input)).toThrow(message);
  });

  test('rejects a file too large for RecordIO, naming its key', () => {
    // GIVEN a buffer whose length claims 2^29 - 24 bytes: the IRHeader makes the payload 2^29
    const data = Buffer.alloc(0);
    Object.defineProperty(data, 'length', { value: 2 ** 29 - 24 });
    // WHEN / THEN
    expect(() => recordioFormat.encode({ data, key: 'huge.tif', label: 0, recordId: 0 })).toThrow(/^huge\.tif: RecordIO records must be smaller than 2\^29 bytes/);
  });
});

describe('imageFormatOf', () => {
  const FORMATS: Array<[string, string]> = [
    ['cat/0001.jpg', 'jpeg'],
    ['cat/0001.JPG', 'jpeg'],
    ['a.jpeg', 'jpeg'],
    ['x/y.png', 'png'],
    ['scan.TIF', 'tiff'],
    ['pic.webp', 'webp'],
    ['dir.d/README', ''],
    ['.hidden', ''],
    ['a/b.tar.gz', 'gz'],
    ['trailing.', ''],
    ['x.', ''],
    ['cat/.jpg', ''],
    ['.jpg', ''],
    ['jpg', ''],
    ['dog/2.jpg', 'jpeg'],
  ];

  test.each(FORMATS)('%s → %j', (key, expected) => {
    // WHEN / THEN
    expect(imageFormatOf(key)).toBe(expected);
  });

  test('gives every key its own format whichever key came before (the last extension is remembered)', () => {
    for (const [before] of FORMATS) {
      for (const [key, expected] of FORMATS) {
        // GIVEN
        imageFormatOf(before);
        // WHEN / THEN
        expect([before, key, imageFormatOf(key)]).toEqual([before, key, expected]);
      }
    }
  });
});
