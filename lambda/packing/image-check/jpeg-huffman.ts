/**
 * A JPEG Huffman table for reading symbols only (no coefficients are kept): codes of up to 9 bits
 * in one lookup, longer ones by length as libjpeg does (jdhuff.c). Built from a DHT segment's 16
 * counts and its symbols; a table whose codes overflow their lengths is refused, as libjpeg does.
 */
export class HuffmanTable {
  /** Indexed by the next 9 bits: (code length << 8) | symbol, or 0 when the code is longer. */
  public readonly fast = new Int32Array(1 << FAST_BITS);
  /**
   * For AC tables, indexed by the next 9 bits: when they hold a whole coefficient (its code and
   * its value's bits, as stb_image does), (zero run << 8) | bits to skip; else 0. Most coefficients
   * of a small JPEG are read with one lookup.
   */
  public readonly fastCoefficient = new Int32Array(1 << FAST_BITS);
  /** Per length 1-16 (index 17: a sentinel above every code). */
  public readonly maxCode = new Int32Array(18);
  public readonly minCode = new Int32Array(17);
  public readonly valueOffset = new Int32Array(17);

  /** Undefined when the counts and symbols do not form a table (the reason is the caller's). */
  public static build(counts: Uint8Array, symbols: Uint8Array): HuffmanTable | undefined {
    // A copy: the file's buffer is reused for the next file, and a table outlives it (see builtTable).
    const table = new HuffmanTable(Uint8Array.from(symbols));
    let code = 0;
    let k = 0;
    for (let length = 1; length <= 16; length++) {
      const count = counts[length - 1];
      table.valueOffset[length] = k;
      table.minCode[length] = code;
      code += count;
      k += count;
      if (code > 1 << length) return undefined;
      table.maxCode[length] = count > 0 ? code - 1 : -1;
      code <<= 1;
    }
    table.maxCode[17] = 0x7fffffff;
    for (let length = 1; length <= FAST_BITS; length++) {
      for (let c = table.minCode[length]; c <= table.maxCode[length]; c++) {
        const entry = (length << 8) | table.symbols[table.valueOffset[length] + c - table.minCode[length]];
        const first = c << (FAST_BITS - length);
        table.fast.fill(entry, first, first + (1 << (FAST_BITS - length)));
        const size = entry & 15;
        if (size !== 0 && length + size <= FAST_BITS) {
          table.fastCoefficient.fill((((entry & 0xff) >> 4) << 8) | (length + size), first, first + (1 << (FAST_BITS - length)));
        }
      }
    }
    return table;
  }

  private constructor(public readonly symbols: Uint8Array) {}
}

export const FAST_BITS = 9;
