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

/** CRC-32C of `data[start, end)`, without making a view of it when the range is short. */
export function crc32cOfRange(data: Uint8Array, start: number, end: number): number {
  if (end - start >= NATIVE_MIN_BYTES) return crc32c(data.subarray(start, end));
  let crc = 0xffffffff;
  for (let i = start; i < end; i++) crc = TABLE[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
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
