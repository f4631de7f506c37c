import * as fs from 'node:fs';
import * as path from 'node:path';
import { alignedStagingBuffer, openFileWriter } from '../../lambda/io/file-writer';
import { seededBytes, temporaryFolders } from '../support/local-files';

const folder = temporaryFolders();
const MIB = 1024 * 1024;

/** Writes `data` cut into chunks of the given sizes (cycled), then closes. */
async function writeInChunks(file: string, staging: Buffer | undefined, data: Buffer, chunkSizes: number[]): Promise<boolean> {
  const writer = await openFileWriter(file, staging);
  for (let at = 0, i = 0; at < data.length; i++) {
    const size = chunkSizes[i % chunkSizes.length];
    // Two chunks per call, as a sink is handed them.
    await writer.write([data.subarray(at, at + size), data.subarray(at + size, at + 2 * size)]);
    at += 2 * size;
  }
  await writer.close();
  return writer.direct;
}

describe('openFileWriter', () => {
  const sizes = [0, 1, 4095, 4096, 4097, 4 * MIB - 1, 4 * MIB, 4 * MIB + 1, 9 * MIB + 123];

  test.each(sizes)('writes %d bytes exactly, through an aligned staging buffer (direct where the file system allows)', async (size) => {
    // GIVEN
    const data = seededBytes(`file-${size}`, size);
    const file = path.join(folder('direct'), 'out.bin');
    // WHEN
    await writeInChunks(file, alignedStagingBuffer(), data, [1, 5000, 3 * MIB, 4096]);
    // THEN
    expect(fs.readFileSync(file).equals(data)).toBe(true);
  });

  test.each(sizes)('writes %d bytes exactly through the page cache', async (size) => {
    // GIVEN
    const data = seededBytes(`file-${size}`, size);
    const file = path.join(folder('buffered'), 'out.bin');
    // WHEN
    const direct = await writeInChunks(file, undefined, data, [7, 2 * MIB]);
    // THEN
    expect(direct).toBe(false);
    expect(fs.readFileSync(file).equals(data)).toBe(true);
  });

  test('goes on through the page cache when a direct write is refused (a staging buffer off the page boundary)', async () => {
    // GIVEN a staging buffer one byte past an aligned start: O_DIRECT refuses its writes with EINVAL
    // (or the file system refuses O_DIRECT at open; either way the file must come out whole)
    const misaligned = Buffer.from(alignedStagingBuffer()!.buffer, 1, 4 * MIB - 4096);
    const data = seededBytes('misaligned', 10 * MIB + 5);
    const file = path.join(folder('fallback'), 'out.bin');
    // WHEN
    const direct = await writeInChunks(file, misaligned, data, [MIB]);
    // THEN
    expect(direct).toBe(false);
    expect(fs.readFileSync(file).equals(data)).toBe(true);
  });

  test('overwrites a longer file that was there, to the new length', async () => {
    // GIVEN
    const file = path.join(folder('overwrite'), 'out.bin');
    fs.writeFileSync(file, Buffer.alloc(3 * MIB, 1));
    const data = seededBytes('shorter', 5000);
    // WHEN
    await writeInChunks(file, alignedStagingBuffer(), data, [5000]);
    // THEN
    expect(fs.readFileSync(file).equals(data)).toBe(true);
  });

  test('abandon closes without writing what is still staged', async () => {
    // GIVEN
    const file = path.join(folder('abandon'), 'out.bin');
    const writer = await openFileWriter(file, alignedStagingBuffer());
    await writer.write([seededBytes('staged', 4 * MIB + 10)]);
    // WHEN
    await writer.abandon();
    // THEN only the full 4 MiB block reached the file
    expect(fs.statSync(file).size).toBe(4 * MIB);
  });
});
