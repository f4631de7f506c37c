/** The base64 big-endian form S3 uses for CRC32C checksums (and the manifest records, so the two compare as strings). */
export function crc32cBase64(crc: number): string {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(crc >>> 0);
  return bytes.toString('base64');
}
