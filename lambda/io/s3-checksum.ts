/** The base64 big-endian form S3 uses for CRC32C checksums (and the manifest records, so the two compare as strings). */
export function crc32cBase64(crc: number): string {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(crc >>> 0);
  return bytes.toString('base64');
}

/** The same form for a CRC-32 (zlib's, IEEE): S3's ChecksumCRC32 and the manifest's `crc32`. */
export function crc32Base64(crc: number): string {
  return crc32cBase64(crc);
}
