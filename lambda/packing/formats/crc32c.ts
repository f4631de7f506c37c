/**
 * CRC-32C (Castagnoli) and TFRecord's masked form of it.
 *
 * The native @node-rs/crc32 addon uses SSE4.2 on x86_64 (GB/s, see shard-formats.md §7); the shard
 * writer runs it over every byte it writes, so a pure-JS table would dominate the packing time.
 * Only ranges of a few bytes are checksummed with a JS table (see {@link crc32cOfRange}).
 */
import { crc32c as nativeCrc32c } from '@node-rs/crc32';

/** TensorFlow's `kMaskDelta` (tsl/lib/hash/crc32c.h). */
const MASK_DELTA = 0xa282ead8;

/** Reflected Castagnoli polynomial. */
const POLYNOMIAL = 0x82f63b78;

/**
 * Ranges shorter than this are checksummed in JS: a call into the addon costs about 170 ns
 * whatever the length, more than a byte-wise table lookup over a TFRecord length field (8 bytes).
 */
const NATIVE_MIN_BYTES = 64;

/** Byte-wise lookup table for the short ranges. */
const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let crc = n;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ POLYNOMIAL : crc >>> 1;
    table[n] = crc >>> 0;
  }
  return table;
})();

/**
 * CRC-32C of `data`, continuing from `initial` (the CRC of the bytes before `data`), so a record held
 * in several chunks can be checksummed without concatenating them. Plain CRC, as S3 reports it.
 */
export function crc32c(data: Uint8Array, initial = 0): number {
  // `>>> 0` pins the unsigned contract even if the addon ever hands back a signed int32.
  return nativeCrc32c(data, initial) >>> 0;
}

/**
 * CRC-32C of `data[start, end)`, continuing from `initial` as {@link crc32c} does, without making a
 * view of the range when it is short.
 */
export function crc32cOfRange(data: Uint8Array, start: number, end: number, initial = 0): number {
  if (end - start >= NATIVE_MIN_BYTES) return crc32c(data.subarray(start, end), initial);
  let crc = ~initial;
  for (let i = start; i < end; i++) crc = TABLE[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return ~crc >>> 0;
}

/**
 * CRC-32C of `a` followed by `b`, from the CRCs of both and the length of `b`, without the bytes
 * (zlib's crc32_combine, carried over to the Castagnoli polynomial): the CRC of `a` is shifted
 * over `lengthB` zero bytes by multiplying it by x^(8·lengthB) modulo the polynomial. The shard
 * writer combines the CRCs TFRecord framing computes anyway instead of reading every byte twice.
 */
export function crc32cCombine(crcA: number, crcB: number, lengthB: number): number {
  let shifted = crcA;
  // x^(8·lengthB) is the product of x^(2^k) over the set bits k of 8·lengthB.
  for (let n = lengthB, k = 3; n > 0; n = Math.floor(n / 2), k++) {
    if (n % 2 === 1) shifted = multiplyByXPow2K(k, shifted);
  }
  return (shifted ^ crcB) >>> 0;
}

/** x^(2^k) modulo the polynomial, by k, made as needed by squaring. */
const xPow2K: number[] = [1 << 30]; // x^1, reflected

/**
 * By k, the products of x^(2^k) with every byte value at each of the four byte positions:
 * multiplying a CRC by x^(2^k) is linear, so it takes four lookups instead of 32 shift-and-xor
 * steps (made as needed, 4 KiB each, from 32 multiplications).
 */
const multiplyTables: Uint32Array[] = [];

function multiplyByXPow2K(k: number, value: number): number {
  let table = multiplyTables[k];
  if (table === undefined) {
    while (xPow2K.length <= k) xPow2K.push(multiplyModP(xPow2K[xPow2K.length - 1], xPow2K[xPow2K.length - 1]));
    table = new Uint32Array(4 * 256);
    for (let position = 0; position < 4; position++) {
      const base = 256 * position;
      // Linear in the value: the product with a byte is the XOR of the products with its bits, so
      // 8 multiplications per position fill its 256 entries.
      for (let bit = 0; bit < 8; bit++) table[base + (1 << bit)] = multiplyModP(xPow2K[k], (1 << (8 * position + bit)) >>> 0);
      for (let byte = 3; byte < 256; byte++) {
        const lowest = byte & -byte;
        if (lowest !== byte) table[base + byte] = table[base + lowest] ^ table[base + (byte ^ lowest)];
      }
    }
    multiplyTables[k] = table;
  }
  return (table[value & 0xff] ^ table[256 + ((value >>> 8) & 0xff)] ^ table[512 + ((value >>> 16) & 0xff)] ^ table[768 + (value >>> 24)]) >>> 0;
}

/** a(x)·b(x) modulo the polynomial, in the reflected bit order CRCs use (zlib's multmodp). */
function multiplyModP(a: number, b: number): number {
  let product = 0;
  for (let m = 0x80000000; m > 0; m >>>= 1) {
    if (a & m) {
      product ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    b = b & 1 ? (b >>> 1) ^ POLYNOMIAL : b >>> 1;
  }
  return product >>> 0;
}

/**
 * TFRecord's masked CRC: rotate right by 15 and add a constant, because a CRC of data that itself
 * contains CRCs is weak (TensorFlow's rationale for `crc32c::Mask`).
 */
export function maskCrc32c(crc: number): number {
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + MASK_DELTA) >>> 0;
}

/** Inverse of {@link maskCrc32c}. */
export function unmaskCrc32c(masked: number): number {
  const rotated = (masked - MASK_DELTA) >>> 0;
  return ((rotated >>> 17) | (rotated << 15)) >>> 0;
}
