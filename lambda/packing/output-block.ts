import { crc32 } from 'node:zlib';
import { crc32c, crc32cCombine, crc32cOfRange } from './formats/crc32c';
import type { Encoded } from './formats/encoded';
import type { ObjectWriter } from '../io/storage';

/**
 * Gathers framed records into a block and writes it when full: one CRC32C call and one write per
 * few MiB instead of several per record (for 5 KB files the per-call costs dominate the copy).
 * Records are framed straight into the block (see Encoded), so a file's bytes are copied once, and
 * may come from a buffer the reader reuses for the next file. Two blocks take turns: records are
 * framed into one while the sink writes the other.
 */
export class OutputBlock {
  private readonly blocks: [Buffer, Buffer];
  private current = 0;
  private used = 0;
  /** CRC32C of everything appended up to `crcEnd` bytes into the current block. */
  private crc = 0;
  private crcEnd = 0;
  /** zlib's CRC-32 of every block handed to the sink: once a block, readers without a fast CRC-32C check it. */
  private zlibCrc = 0;
  private sent = 0;
  /** The write of the other block, if one is under way; its failure is kept for the next call. */
  private sending: Promise<void> | undefined;
  private failure: { readonly error: unknown } | undefined;

  constructor(private readonly writer: ObjectWriter, capacity: number) {
    this.blocks = [Buffer.allocUnsafe(capacity), Buffer.allocUnsafe(capacity)];
  }

  /** Bytes appended so far: the offset of the next record in the object. */
  public get size(): number {
    return this.sent + this.used;
  }

  /**
   * CRC32C of everything appended (complete after `flush`). Records that bring their own CRC are
   * combined in (see Encoded); the bytes of the others are checksummed a block at a time.
   */
  public get checksum(): number {
    return this.crc;
  }

  /** zlib's CRC-32 (IEEE) of everything appended (complete after `flush`): the manifest's `crc32`. */
  public get zlibChecksum(): number {
    return this.zlibCrc;
  }

  /**
   * Appends one record. Most records fit the block: then nothing is returned and nothing awaited
   * (this runs once per input file); otherwise a promise that resolves once the full block has been
   * handed over and the record framed or written.
   */
  public append(record: Encoded): Promise<void> | undefined {
    if (this.used + record.size > this.blocks[this.current].length) return this.appendAfterSend(record);
    this.frame(record);
    return undefined;
  }

  private async appendAfterSend(record: Encoded): Promise<void> {
    await this.send();
    if (record.size > this.blocks[this.current].length) {
      // A record larger than a block is framed in a buffer of its own (memory holds the file twice
      // meanwhile) and written before the reader reuses the file's buffer.
      await this.settle();
      const framed = Buffer.allocUnsafe(record.size);
      const recordCrc = record.writeTo(framed, 0);
      this.crc = recordCrc === undefined ? crc32c(framed, this.crc) : crc32cCombine(this.crc, recordCrc, framed.length);
      this.zlibCrc = crc32(framed, this.zlibCrc);
      await this.writer.write([framed]);
      this.sent += framed.length;
      return;
    }
    this.frame(record);
  }

  private frame(record: Encoded): void {
    const block = this.blocks[this.current];
    const recordCrc = record.writeTo(block, this.used);
    if (recordCrc !== undefined) {
      this.crc = crc32cCombine(crc32cOfRange(block, this.crcEnd, this.used, this.crc), recordCrc, record.size);
      this.crcEnd = this.used + record.size;
    }
    this.used += record.size;
  }

  /** Writes everything appended and waits until the sink has it. */
  public async flush(): Promise<void> {
    await this.send();
    await this.settle();
  }

  /** Hands the filled block to the sink (after the previous one: writes stay in order) and switches to the other. */
  private async send(): Promise<void> {
    if (this.used === 0) return;
    const filled = this.blocks[this.current].subarray(0, this.used);
    this.crc = crc32cOfRange(filled, this.crcEnd, this.used, this.crc);
    this.crcEnd = 0;
    this.zlibCrc = crc32(filled, this.zlibCrc);
    await this.settle();
    this.sending = this.writer.write([filled]).catch((error: unknown) => {
      this.failure ??= { error };
    });
    this.sent += this.used;
    this.used = 0;
    this.current = 1 - this.current;
  }

  private async settle(): Promise<void> {
    await this.sending;
    this.sending = undefined;
    if (this.failure) throw this.failure.error;
  }
}
