/**
 * Bytes of known size that write themselves into a caller's buffer. Records are built this way
 * straight into the shard writer's output block: for 5 KB files, assembling a record from chunks
 * and copying the chunks cost more than the bytes themselves (an allocation and a CRC32C call per
 * chunk), so each record's bytes are written once, where they will be sent from.
 */
export interface Encoded {
  /** The number of bytes `writeTo` writes. */
  readonly size: number;
  /**
   * Writes the bytes into `target` from `offset`; `target` must have `size` bytes there. Returns
   * their CRC-32C when the encoding computed it on the way (TFRecord framing does), so that a
   * checksum over many records is combined from theirs instead of reading the bytes again; else
   * undefined.
   */
  writeTo(target: Buffer, offset: number): number | undefined;
}

/** A buffer as {@link Encoded}: copied when written. */
export function encodedBytes(bytes: Uint8Array): Encoded {
  return {
    size: bytes.length,
    writeTo: (target, offset) => {
      target.set(bytes, offset);
      return undefined;
    },
  };
}

/** The bytes of `encoded` in a buffer of their own. */
export function encodedToBuffer(encoded: Encoded): Buffer {
  const buffer = Buffer.allocUnsafe(encoded.size);
  encoded.writeTo(buffer, 0);
  return buffer;
}
