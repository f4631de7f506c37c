import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from './run-cli';
import { writeFiles } from './local-files';

/** Small real JPEGs (test/fixtures/images/README.md). */
const IMAGES = path.join(__dirname, '..', 'fixtures', 'images');

/** RecordIO's magic word as it lies in a file: little-endian 0xced7230a. */
const RECORDIO_MAGIC = Buffer.from([0x0a, 0x23, 0xd7, 0xce]);

/** The fixture JPEGs, in name order. */
export function fixtureJpegs(): Buffer[] {
  return fs.readdirSync(IMAGES).filter((name) => name.endsWith('.jpg')).sort().map((name) => fs.readFileSync(path.join(IMAGES, name)));
}

/**
 * A real JPEG with a comment segment (FF FE) right after its start marker, which decoders skip:
 * it makes every file's bytes unique and, with `magicWords`, holds the RecordIO magic word twice at
 * 4-aligned offsets of the record (IRHeader + file), so the engine must split those records.
 */
export function jpegWithComment(jpeg: Buffer, text: string, magicWords: boolean): Buffer {
  // The comment starts at file offset 6 (SOI 2 + marker 2 + length 2); 2 bytes of padding put the
  // magic words at file offsets 8 and 12, record offsets 32 and 36.
  const body = Buffer.concat([Buffer.from('..'), magicWords ? Buffer.concat([RECORDIO_MAGIC, RECORDIO_MAGIC]) : Buffer.alloc(0), Buffer.from(text)]);
  const length = Buffer.alloc(2);
  length.writeUInt16BE(body.length + 2);
  return Buffer.concat([jpeg.subarray(0, 2), Buffer.from([0xff, 0xfe]), length, body, jpeg.subarray(2)]);
}

/**
 * A unique real JPEG of about `size` bytes (at least a fixture's): a fixture JPEG, chosen by `name`,
 * with a comment segment that holds `name` and is padded to the size. For tests whose files must
 * pass the pack-time image check and still differ in size.
 */
export function sizedJpeg(name: string, size: number): Buffer {
  const jpegs = fixtureJpegs();
  const jpeg = jpegs[[...name].reduce((sum, c) => sum + c.charCodeAt(0), 0) % jpegs.length];
  const padding = Math.max(0, Math.min(60_000, size - jpeg.length - name.length - 8));
  return jpegWithComment(jpeg, `${name} ${'.'.repeat(padding)}`, false);
}

/** A folder of `count` unique JPEGs, `<class>/<i>.jpg` over `classes` in turn; the files by key. */
export function jpegSourceFolder(dir: string, count: number, classes: readonly string[]): Record<string, Buffer> {
  const jpegs = fixtureJpegs();
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < count; i++) {
    const key = `${classes[i % classes.length]}/${i}.jpg`;
    files[key] = jpegWithComment(jpegs[i % jpegs.length], `cdk-training-io test file ${key}`, false);
  }
  writeFiles(dir, files);
  return files;
}

/**
 * `training-io pack <source> <output> --format <format> --shards <shards>`, as a user runs it.
 *
 * @throws when it exits with another status than 0, with what it printed
 */
export async function packWithCli(source: string, output: string, format: 'tfrecord' | 'recordio', shards: number): Promise<void> {
  const packed = await runCli('pack', source, output, '--format', format, '--shards', String(shards));
  if (packed.code !== 0) throw new Error(`training-io pack exited with ${packed.code}:\n${packed.stdout}${packed.stderr}`);
}
