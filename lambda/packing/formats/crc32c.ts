/**
 * CRC-32C (Castagnoli) and TFRecord's masked form of it.
 *
 * The native @node-rs/crc32 addon uses SSE4.2 on x86_64 (GB/s, see shard-formats.md §7); the shard
 * writer runs it over every byte it writes, so a pure-JS table would dominate the packing time.
 */
import { crc32c as nativeCrc32c } from '@node-rs/crc32';

/** TensorFlow's `kMaskDelta` (tsl/lib/hash/crc32c.h). */
const MASK_DELTA = 0xa282ead8;

/**
 * CRC-32C of `data`, continuing from `initial` (the CRC of the bytes before `data`), so a record held
 * in several chunks can be checksummed without concatenating them. Plain CRC, as S3 reports it.
 */
export function crc32c(data: Uint8Array, initial = 0): number {
  // `>>> 0` pins the unsigned contract even if the addon ever hands back a signed int32.
  return nativeCrc32c(data, initial) >>> 0;
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
