import { crc32c } from '@node-rs/crc32';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { encodedBytes, encodedToBuffer } from '../../lambda/packing/formats/encoded';
import { frameTfRecord } from '../../lambda/packing/formats/tfrecord';
import type { ObjectWriter } from '../../lambda/io/storage';
import { OutputBlock } from '../../lambda/packing/output-block';
import { seededBytes } from '../support/local-files';

/** A writer that keeps a copy of each write (the block is reused after it) and can be made to fail or stall. */
class RecordingWriter implements ObjectWriter {
  public readonly writes: Buffer[] = [];
  public failWith: Error | undefined;
  public inFlight = 0;
  public maxInFlight = 0;

  public async write(chunks: Buffer[]): Promise<void> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    this.inFlight--;
    if (this.failWith) throw this.failWith;
    this.writes.push(Buffer.concat(chunks));
  }

  public async complete(): Promise<void> {}
  public async abort(): Promise<void> {}

  public get bytes(): Buffer {
    return Buffer.concat(this.writes);
  }
}

/** Records of seeded bytes. */
function records(count: number, size: (i: number) => number): Buffer[] {
  return Array.from({ length: count }, (_, i) => seededBytes(`record-${i}`, size(i)));
}

async function appendAll(output: OutputBlock, all: Buffer[], reuse: boolean): Promise<void> {
  for (const record of all) {
    await output.append(encodedBytes(record));
    // A reader that reuses its buffer overwrites the record's bytes as soon as append resolves.
    if (reuse) record.fill(0xee);
  }
}

describe('OutputBlock', () => {
  test('writes every record in order, in full blocks, with the CRC32C of all bytes, even when the caller reuses its buffer', async () => {
    // GIVEN 200 records of 100–1099 bytes and a 4 KiB block
    const writer = new RecordingWriter();
    const output = new OutputBlock(writer, 4096);
    const all = records(200, (i) => 100 + ((i * 7919) % 1000));
    const expected = Buffer.concat(all);

    // WHEN
    await appendAll(output, all, true);
    await output.flush();

    // THEN
    expect(writer.bytes.equals(expected)).toBe(true);
    expect(output.size).toBe(expected.length);
    expect(output.checksum).toBe(crc32c(expected));
    expect(output.zlibChecksum).toBe(zlibCrc32(expected));
    expect(writer.writes.slice(0, -1).every((block) => block.length > 4096 - 1100 && block.length <= 4096)).toBe(true);
    expect(writer.maxInFlight).toBe(1);
  });

  test('a record larger than a block is written on its own, between the blocks around it', async () => {
    // GIVEN
    const writer = new RecordingWriter();
    const output = new OutputBlock(writer, 1024);
    const all = records(5, (i) => (i === 2 ? 5000 : 300));
    const expected = Buffer.concat(all);

    // WHEN
    await appendAll(output, all, true);
    await output.flush();

    // THEN
    expect(writer.bytes.equals(expected)).toBe(true);
    expect(writer.writes.map((block) => block.length)).toEqual([600, 5000, 600]);
    expect(output.checksum).toBe(crc32c(expected));
    expect(output.zlibChecksum).toBe(zlibCrc32(expected));
  });

  test('combines the CRCs records bring with the bytes of those that bring none', async () => {
    // GIVEN TFRecords (which return their CRC) between raw records (which do not), and a 4 KiB block
    const writer = new RecordingWriter();
    const output = new OutputBlock(writer, 4096);
    const payloads = records(60, (i) => 50 + ((i * 104_729) % 900));
    const framed = payloads.map((payload, i) => (i % 3 === 0 ? encodedBytes(payload) : frameTfRecord(encodedBytes(payload))));
    const expected = Buffer.concat(framed.map((record) => encodedToBuffer(record)));

    // WHEN
    for (const record of framed) await output.append(record);
    await output.flush();

    // THEN
    expect(writer.bytes.equals(expected)).toBe(true);
    expect(output.checksum).toBe(crc32c(expected));
    expect(output.zlibChecksum).toBe(zlibCrc32(expected));
  });

  test('a TFRecord larger than a block brings its CRC too, between records that bring none', async () => {
    // GIVEN a 1 KiB block, raw records around a 5,000-byte TFRecord
    const writer = new RecordingWriter();
    const output = new OutputBlock(writer, 1024);
    const framed = [encodedBytes(seededBytes('before', 300)), frameTfRecord(encodedBytes(seededBytes('large', 5000))), encodedBytes(seededBytes('after', 300))];
    const expected = Buffer.concat(framed.map((record) => encodedToBuffer(record)));

    // WHEN
    for (const record of framed) await output.append(record);
    await output.flush();

    // THEN
    expect(writer.bytes.equals(expected)).toBe(true);
    expect(writer.writes.map((block) => block.length)).toEqual([300, 5016, 300]);
    expect(output.checksum).toBe(crc32c(expected));
    expect(output.zlibChecksum).toBe(zlibCrc32(expected));
  });

  test('a failed write of a block is reported by the next append or by flush, not lost', async () => {
    // GIVEN a sink that fails every write
    const writer = new RecordingWriter();
    writer.failWith = new Error('disk full');
    const output = new OutputBlock(writer, 1024);

    // WHEN the first block is handed over, then more records come
    const appending = appendAll(output, records(20, () => 300), false).then(() => output.flush());

    // THEN
    await expect(appending).rejects.toThrow('disk full');
  });

  test('an empty block writes nothing', async () => {
    const writer = new RecordingWriter();
    const output = new OutputBlock(writer, 1024);
    await output.flush();
    expect({ writes: writer.writes.length, size: output.size, checksum: output.checksum }).toEqual({ writes: 0, size: 0, checksum: 0 });
  });
});
