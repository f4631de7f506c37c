import { FAST_BITS, type HuffmanTable } from './jpeg-huffman';

/**
 * Zero bytes kept after a segment's data: reading past the end supplies zero bits, as libjpeg
 * does, and the scan checks for an overrun once a block and once an MCU; an MCU (at most 10 blocks
 * of 64 coefficients, each at most 32 bits) reads under 3 KB past the end. Reads beyond the
 * padding still give zeros (out of range reads are undefined, which shifts as 0), only slower.
 */
const PADDING = 4096;

const FAST_MASK = (1 << FAST_BITS) - 1;

/**
 * The buffer segments are unstuffed into: one for every reader of a thread (the check is
 * synchronous and reads one segment at a time), so that checking a file allocates nothing for
 * its entropy-coded data. A larger segment gets a buffer of its own, not kept after it.
 */
const SHARED = Buffer.alloc(64 * 1024 + PADDING);

/** The segment being read, its stuffed `FF 00` bytes made `FF`, then PADDING zero bytes. */
let unstuffed = SHARED;

/**
 * Reads one entropy-coded segment of a JPEG scan bit by bit: stuffed `FF 00` bytes read as `FF`,
 * and at the first marker (or the end of the file) it supplies zero bits, as libjpeg does, but
 * counts them, so that a scan whose data stops early is told from a complete one (libjpeg only
 * warns "premature end of data segment" and decodes the rest as grey). The segment is unstuffed
 * in bulk when it starts (runs without FF copied natively), so reading a symbol is three byte
 * loads at a bit position, with no refill to test for.
 */
export class EntropyReader {
  /** Bits of the unstuffed segment read so far (hot loops keep it in a local, see readAc). */
  public bitPos = 0;
  /** Bits the segment holds. */
  private bitEnd = 0;
  /** Where the marker after the segment starts, or the file's length when none follows. */
  private end = 0;

  constructor(private readonly data: Buffer, start: number) {
    this.restart(start);
  }

  /** True when more bits were read than the segment holds: its data stopped early. */
  public get overran(): boolean {
    return this.bitPos > this.bitEnd;
  }

  /** The next Huffman symbol, or -1 when the bits are no code of `table`. */
  public symbol(table: HuffmanTable): number {
    const entry = table.fast[this.peekFast()];
    if (entry !== 0) {
      this.bitPos += entry >> 8;
      return entry & 0xff;
    }
    const bits16 = this.peek16();
    for (let length = FAST_BITS + 1; length <= 16; length++) {
      const code = bits16 >>> (16 - length);
      if (code <= table.maxCode[length]) {
        this.bitPos += length;
        return table.symbols[table.valueOffset[length] + code - table.minCode[length]];
      }
    }
    return -1;
  }

  /** The next FAST_BITS bits (zero bits past the data), not consumed: a lookup tables' index. */
  public peekFast(): number {
    const at = this.bitPos >>> 3;
    return (((unstuffed[at] << 16) | (unstuffed[at + 1] << 8) | unstuffed[at + 2]) >>> (24 - FAST_BITS - (this.bitPos & 7))) & FAST_MASK;
  }

  /** Consumes `count` bits of those peeked. */
  public consume(count: number): void {
    this.bitPos += count;
  }

  /** Skips `count` (0-16) bits. */
  public skip(count: number): void {
    this.bitPos += count;
  }

  /** Reads `count` (1-16) bits as a number. */
  public read(count: number): number {
    const value = this.peek16() >>> (16 - count);
    this.bitPos += count;
    return value;
  }

  /**
   * Ends the segment: the position of the marker that follows it (bytes between, which libjpeg
   * skips with a warning, are skipped too), or the file's length when there is none.
   */
  public endSegment(): number {
    return this.end;
  }

  /**
   * Starts a segment at `pos` (the scan's data, or the data after a restart marker): unstuffs it
   * up to the first marker (fill bytes, `FF` before `FF`, are skipped) or the end of the file.
   */
  public restart(pos: number): void {
    const { data } = this;
    unstuffed = SHARED;
    let length = 0;
    let at = pos;
    for (;;) {
      const ff = data.indexOf(0xff, at);
      const stop = ff < 0 ? data.length : ff;
      if (unstuffed.length < length + (stop - at) + 1 + PADDING) this.grow(length + (stop - at) + 1);
      length += data.copy(unstuffed, length, at, stop);
      if (ff < 0) {
        this.end = data.length;
        break;
      }
      const next = ff + 1 < data.length ? data[ff + 1] : -1;
      if (next === 0) {
        unstuffed[length++] = 0xff;
        at = ff + 2;
      } else if (next === 0xff) {
        at = ff + 1;
      } else {
        // A marker; one in the file's last byte is no marker, and the segment runs to the end.
        this.end = next < 0 ? data.length : ff;
        break;
      }
    }
    unstuffed.fill(0, length, length + PADDING);
    this.bitPos = 0;
    this.bitEnd = length * 8;
  }

  /** The segment's bytes, unstuffed, then zero bytes: for hot loops that read bits themselves. */
  public get bytes(): Buffer {
    return unstuffed;
  }

  /** The next 16 bits (zero bits past the data), not consumed. */
  private peek16(): number {
    const at = this.bitPos >>> 3;
    return (((unstuffed[at] << 16) | (unstuffed[at + 1] << 8) | unstuffed[at + 2]) >>> (8 - (this.bitPos & 7))) & 0xffff;
  }

  /** Makes room for `bytes` of segment and the padding, keeping what is unstuffed so far. */
  private grow(bytes: number): void {
    const larger = Buffer.alloc(Math.max(2 * unstuffed.length, bytes + PADDING));
    unstuffed.copy(larger);
    unstuffed = larger;
  }
}
