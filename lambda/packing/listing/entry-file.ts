import * as fs from 'node:fs';
import type { ListedFile } from '../../io/storage';

/**
 * Listed files on local disk, for listings too large to hold: per file a u32 (little-endian) byte
 * length of the key, the key in UTF-8, then size and modified as f64. Written and read through a
 * buffer of `bufferBytes` (many such files may be open at once, so it stays small).
 *
 * Hand-written: the format is private to one run and read back by the same code; a serialization
 * library would add a per-record object and schema for four fields.
 */
export class EntryFileWriter {
  private readonly fd: number;
  private buffer: Buffer;
  private used = 0;

  constructor(public readonly path: string, bufferBytes: number) {
    this.fd = fs.openSync(path, 'w');
    this.buffer = Buffer.allocUnsafe(bufferBytes);
  }

  public write(file: ListedFile): void {
    const keyBytes = Buffer.byteLength(file.key);
    const length = 4 + keyBytes + 16;
    if (this.used + length > this.buffer.length) {
      this.flush();
      if (length > this.buffer.length) this.buffer = Buffer.allocUnsafe(length);
    }
    const buffer = this.buffer;
    buffer.writeUInt32LE(keyBytes, this.used);
    buffer.write(file.key, this.used + 4, keyBytes, 'utf8');
    buffer.writeDoubleLE(file.size, this.used + 4 + keyBytes);
    buffer.writeDoubleLE(file.modified, this.used + 12 + keyBytes);
    this.used += length;
  }

  public close(): void {
    this.flush();
    fs.closeSync(this.fd);
  }

  private flush(): void {
    let written = 0;
    while (written < this.used) written += fs.writeSync(this.fd, this.buffer, written, this.used - written);
    this.used = 0;
  }
}

/** The files of an entry file, in the order written. */
export function* readEntryFile(path: string, bufferBytes: number): Generator<ListedFile> {
  const fd = fs.openSync(path, 'r');
  try {
    let buffer = Buffer.allocUnsafe(bufferBytes);
    let start = 0;
    let end = 0;
    for (;;) {
      // A whole entry in the buffer: decode it; else move the partial one to the front and read on.
      if (end - start >= 4) {
        const length = 4 + buffer.readUInt32LE(start) + 16;
        if (end - start >= length) {
          const keyEnd = start + length - 16;
          yield {
            key: buffer.toString('utf8', start + 4, keyEnd),
            size: buffer.readDoubleLE(keyEnd),
            modified: buffer.readDoubleLE(keyEnd + 8),
          };
          start += length;
          continue;
        }
        if (length > buffer.length) buffer = Buffer.concat([buffer.subarray(start, end)], length);
        else buffer.copy(buffer, 0, start, end);
      } else {
        buffer.copy(buffer, 0, start, end);
      }
      end -= start;
      start = 0;
      const read = fs.readSync(fd, buffer, end, buffer.length - end, null);
      if (read === 0) {
        if (end !== 0) throw new Error(`${path}: ${end} bytes at the end are not a whole entry`);
        return;
      }
      end += read;
    }
  } finally {
    fs.closeSync(fd);
  }
}
