import { FAST_BITS, type HuffmanTable } from './jpeg-huffman';

/**
 * Reads one entropy-coded segment of a JPEG scan bit by bit: stuffed `FF 00` bytes read as `FF`,
 * and at the first marker (or the end of the file) it supplies zero bits, as libjpeg does, but
 * counts them, so that a scan whose data stops early is told from a complete one (libjpeg only
 * warns "premature end of data segment" and decodes the rest as grey).
 */
export class EntropyReader {
  /** Where the next byte is read. */
  public pos: number;
  private acc = 0;
  /** Bits held in `acc`, not yet read. */
  private bits = 0;
  /** Zero bits supplied past the data (the last ones in `acc`). */
  private padBits = 0;
  private atMarker = false;

  constructor(private readonly data: Buffer, start: number) {
    this.pos = start;
  }

  /** True when more bits were read than the segment holds: its data stopped early. */
  public get overran(): boolean {
    return this.padBits > this.bits;
  }

  /** The next Huffman symbol, or -1 when the bits are no code of `table`. */
  public symbol(table: HuffmanTable): number {
    if (this.bits < 16) this.fill();
    const entry = table.fast[(this.acc >>> (this.bits - FAST_BITS)) & FAST_MASK];
    if (entry !== 0) {
      this.bits -= entry >> 8;
      return entry & 0xff;
    }
    for (let length = FAST_BITS + 1; length <= 16; length++) {
      const code = (this.acc >>> (this.bits - length)) & ((1 << length) - 1);
      if (code <= table.maxCode[length]) {
        this.bits -= length;
        return table.symbols[table.valueOffset[length] + code - table.minCode[length]];
      }
    }
    return -1;
  }

  /** The next 9 bits (zero bits past the data), not consumed. */
  public peek9(): number {
    if (this.bits < 16) this.fill();
    return (this.acc >>> (this.bits - 9)) & 0x1ff;
  }

  /** Consumes `count` bits of those peeked. */
  public consume(count: number): void {
    this.bits -= count;
  }

  /** Skips `count` (0-16) bits. */
  public skip(count: number): void {
    if (this.bits < count) this.fill();
    this.bits -= count;
  }

  /** Reads `count` (1-16) bits as a number. */
  public read(count: number): number {
    if (this.bits < count) this.fill();
    this.bits -= count;
    return (this.acc >>> this.bits) & ((1 << count) - 1);
  }

  /**
   * Ends the segment: the position of the marker that follows it (bytes between, which libjpeg
   * skips with a warning, are skipped too), or the file's length when there is none.
   */
  public endSegment(): number {
    const { data } = this;
    let pos = this.pos;
    while (pos + 1 < data.length && !(data[pos] === 0xff && data[pos + 1] !== 0 && data[pos + 1] !== 0xff)) pos++;
    if (pos + 1 >= data.length) return data.length;
    return pos;
  }

  /** Starts the next segment at `pos` (after a restart marker). */
  public restart(pos: number): void {
    this.pos = pos;
    this.acc = 0;
    this.bits = 0;
    this.padBits = 0;
    this.atMarker = false;
  }

  /** Tops `acc` up to more than 24 bits. */
  private fill(): void {
    const { data } = this;
    while (this.bits <= 24) {
      let byte = 0;
      if (!this.atMarker && this.pos < data.length) {
        byte = data[this.pos];
        if (byte === 0xff) {
          const next = this.pos + 1 < data.length ? data[this.pos + 1] : -1;
          if (next === 0) {
            this.pos += 2;
          } else if (next === 0xff) {
            // Fill bytes before a marker: skip one and look again.
            this.pos++;
            continue;
          } else {
            this.atMarker = true;
            byte = 0;
          }
        } else {
          this.pos++;
        }
      } else {
        this.atMarker = true;
      }
      if (this.atMarker) this.padBits += 8;
      this.acc = ((this.acc << 8) | byte) >>> 0;
      this.bits += 8;
    }
  }
}

const FAST_MASK = (1 << FAST_BITS) - 1;
