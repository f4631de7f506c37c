import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { crc32c } from '@node-rs/crc32';
import { crc32Base64, crc32cBase64 } from '../../lambda/io/s3-checksum';
import type { Feature,
  ShardRecord} from '../../lambda/packing/formats';
import {
  decodeExample, parseMxnetIndex, parseTfRecordIndex, readRecordIo, readTfRecords, RECORDIO_MAGIC, recordioFormat, shardFormat, unpackImageRecord,
} from '../../lambda/packing/formats';
import type { ShardFormatName } from '../../lambda/packing/formats/shard-format';
import { LocalDirectorySink, LocalDirectorySource } from '../../lambda/io/local-directory';
import type { ObjectWriter, PackingSink, PackingSource, StoredObject } from '../../lambda/io/storage';
import { listAll } from '../../lambda/io/storage';
import type { Manifest} from '../../lambda/packing/manifest';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import type { PackOptions } from '../../lambda/packing/pack';
import { packDataset } from '../../lambda/packing/pack';
import { datasetObjects, expectSameObjects, inVersion } from '../support/dataset-objects';
import { claimKey, VersionLayout } from '../../lambda/packing/dataset-layout';
import { planShards } from '../../lambda/packing/planning/plan-shards';
import type { PlannedShard } from '../../lambda/packing/planning/plan-types';
import { writeShard } from '../../lambda/packing/shard-writer';
import { verifyDataset } from '../../lambda/packing/verify';
import { listFiles, seededBytes, temporaryFolders, writeFiles } from '../support/local-files';
import { MemorySource, MemoryStore } from '../support/memory-store';
import { seededRandom } from './formats/support';

const MIB = 1024 * 1024;
const FORMATS: ShardFormatName[] = ['tfrecord', 'recordio'];
/** RECORDIO_MAGIC as it lies in a file (little-endian). */
const MAGIC_BYTES = Buffer.from([0x0a, 0x23, 0xd7, 0xce]);

const folder = temporaryFolders();

type PackFolderOptions = Partial<PackOptions> & Pick<PackOptions, 'format'>;

/** Packs `sourceDir` into a fresh folder (seed 7 unless given); the options may replace source and sink. */
async function packFolder(sourceDir: string, options: PackFolderOptions): Promise<{ manifest: Manifest; outDir: string }> {
  const outDir = folder('out');
  const { manifest } = await packDataset({
    source: new LocalDirectorySource(sourceDir),
    sink: new LocalDirectorySink(outDir),
    seed: 7,
    ...options,
  });
  return { manifest, outDir };
}

/**
 * A source holding `files` in memory: for the tests of what the engine decides (balance, sizes),
 * which thousands of files written to a folder and removed again would only slow down; the
 * folders' own reading and writing are tested on real folders here.
 */
function memorySource(files: Readonly<Record<string, Buffer>>): MemorySource {
  const source = new MemorySource();
  for (const [key, data] of Object.entries(files)) source.files.set(key, { data, modified: Date.UTC(2026, 0, 1) });
  return source;
}

/** A source folder holding `files`. */
function sourceFolder(files: Readonly<Record<string, Buffer | string>>): string {
  const dir = folder('src');
  writeFiles(dir, files);
  return dir;
}

/**
 * `count` files of distinct random bytes (`minBytes`–`maxBytes`) spread over the class folders,
 * some of them nested one folder deeper, with .jpg and .png names.
 */
function randomDataset(seed: number, count: number, classes: string[], minBytes = 100, maxBytes = 3000): Record<string, Buffer> {
  const random = seededRandom(seed);
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < count; i++) {
    const name = `${String(i).padStart(5, '0')}.${i % 3 === 0 ? 'png' : 'jpg'}`;
    const cls = classes[i % classes.length];
    const key = i % 7 === 0 ? `${cls}/nested/${name}` : `${cls}/${name}`;
    files[key] = seededBytes(`${seed}/${key}`, minBytes + Math.floor(random() * (maxBytes - minBytes + 1)));
  }
  return files;
}

/** One record read back from the shards, in shard order. */
interface PackedRecord {
  readonly shardKey: string;
  /** `image/filename` (TFRecord only). */
  readonly filename?: string;
  /** `image/format` (TFRecord only). */
  readonly imageFormat?: string;
  /** IRHeader id (RecordIO only). */
  readonly id?: number;
  /** -1 when the record carries none. */
  readonly label: number;
  readonly data: Buffer;
}

/** The manifest on disk and every record of every shard it lists, decoded. */
function readPacked(outDir: string): { manifest: Manifest; records: PackedRecord[] } {
  const manifest = JSON.parse(fs.readFileSync(path.join(outDir, MANIFEST_KEY), 'utf8')) as Manifest;
  const records = manifest.shards.flatMap((shard) => {
    const data = fs.readFileSync(path.join(outDir, shard.key));
    const framed = manifest.format === 'tfrecord' ? [...readTfRecords(data)] : [...readRecordIo(data)];
    return framed.map((record) => decodeRecord(manifest.format, shard.key, record));
  });
  return { manifest, records };
}

function decodeRecord(format: ShardFormatName, shardKey: string, record: ShardRecord): PackedRecord {
  if (format === 'recordio') {
    const { header, data } = unpackImageRecord(record.payload);
    expect(header).toMatchObject({ flag: 0, id2: 0 });
    return { shardKey, id: header.id, label: header.label, data };
  }
  const example = decodeExample(record.payload);
  const label = example['image/class/label'];
  return {
    shardKey,
    filename: bytesOf(example['image/filename']).toString('utf8'),
    imageFormat: bytesOf(example['image/format']).toString('utf8'),
    label: label === undefined ? -1 : Number(int64sOf(label)[0]),
    data: bytesOf(example['image/encoded']),
  };
}

function bytesOf(feature: Feature | undefined): Buffer {
  if (!feature || !('bytesList' in feature) || feature.bytesList.length !== 1) {
    throw new Error(`expected a bytes feature with one value, got ${JSON.stringify(feature)}`);
  }
  return feature.bytesList[0];
}

function int64sOf(feature: Feature): readonly (number | bigint)[] {
  if (!('int64List' in feature)) throw new Error(`expected an int64 feature, got ${JSON.stringify(feature)}`);
  return feature.int64List;
}

/**
 * The source key of each record: TFRecord records name their file; RecordIO records carry only
 * their global id, which the planner (pure, seeded) maps back to a key when replayed with the
 * options of the run.
 */
async function keysOf(records: PackedRecord[], sourceDir: string, options: PackFolderOptions): Promise<string[]> {
  if (options.format === 'tfrecord') return records.map((r) => r.filename!);
  const plan = planShards(await listAll(new LocalDirectorySource(sourceDir)), {
    seed: options.seed ?? 7, targetShardBytes: options.targetShardBytes, shardCount: options.shardCount,
    consumers: options.consumers, labels: options.labels, recordBytes: (key, size) => shardFormat(options.format).recordBytes(key, size),
  });
  const keyById = new Map(plan.shards.flatMap((shard) => shard.records.map((r) => [r.recordId, r.key] as const)));
  return records.map((r) => {
    const key = keyById.get(r.id!);
    if (key === undefined) throw new Error(`record id ${r.id} is not in the plan`);
    return key;
  });
}

/**
 * Checks that the shards hold each source file exactly once, byte for byte, and returns the records
 * by key.
 */
async function expectEachFileOnce(
  outDir: string, sourceDir: string, files: Readonly<Record<string, Buffer>>, options: PackFolderOptions,
): Promise<Map<string, PackedRecord>> {
  const { records } = readPacked(outDir);
  const keys = await keysOf(records, sourceDir, options);
  expect([...keys].sort()).toEqual(Object.keys(files).sort());
  const byKey = new Map(keys.map((key, i) => [key, records[i]]));
  for (const [key, record] of byKey) {
    if (!record.data.equals(files[key])) throw new Error(`the record of '${key}' does not hold the file's ${files[key].length} bytes`);
  }
  return byKey;
}

/** Wraps a source, replacing some of its methods. */
function sourceWith(inner: PackingSource, replace: Partial<Pick<PackingSource, 'list' | 'read'>>, readsInPlace = false): PackingSource {
  return {
    uri: inner.uri,
    list: replace.list ?? (() => inner.list()),
    read: replace.read ?? ((key) => inner.read(key)),
    readInto: readsInPlace ? inner.readInto?.bind(inner) : undefined,
  };
}

/** The two ways the shard writer reads: into one reused buffer (local sources), or concurrently with read-ahead (S3). */
const READ_PATHS: Array<[string, boolean]> = [['in place', true], ['with read-ahead', false]];

/** Wraps a sink, replacing how it creates objects (to fail or observe writes). */
function sinkWithCreate(inner: PackingSink, create: PackingSink['create']): PackingSink {
  return {
    uri: inner.uri,
    get: (key) => inner.get(key),
    put: (key, data) => inner.put(key, data),
    createIfAbsent: (key, data) => inner.createIfAbsent(key, data),
    list: (prefix) => inner.list(prefix),
    modifiedAt: (key) => inner.modifiedAt(key),
    stat: (key) => inner.stat(key),
    delete: (key) => inner.delete(key),
    // A version's folder: its objects are created through `create` too, under their keys from the root.
    scoped: (prefix) => sinkWithCreate(inner.scoped(prefix), (key) => create(`${prefix}${key}`)),
    create,
  };
}

/** A sink that notes which keys become visible, in order, and whether a key showed while it was still being written. */
class RecordingSink implements PackingSink {
  public readonly completed: string[] = [];
  public readonly visibleWhileWriting: string[] = [];
  public readonly deleted: string[] = [];

  /** `prefix`: where a scoped copy is rooted, under the root whose notes (`root`) it adds to. */
  constructor(private readonly inner: PackingSink, private readonly outDir: string, private readonly prefix = '', private readonly root?: RecordingSink) {}

  public get uri(): string {
    return this.inner.uri;
  }

  public scoped(prefix: string): PackingSink {
    return new RecordingSink(this.inner.scoped(prefix), this.outDir, `${this.prefix}${prefix}`, this.root ?? this);
  }

  public async create(key: string): Promise<ObjectWriter> {
    const writer = await this.inner.create(key);
    const notes = this.root ?? this;
    const fullKey = `${this.prefix}${key}`;
    return {
      write: async (chunks) => {
        await writer.write(chunks);
        if (fs.existsSync(path.join(this.outDir, fullKey))) notes.visibleWhileWriting.push(fullKey);
      },
      complete: async () => {
        await writer.complete();
        notes.completed.push(fullKey);
      },
      abort: () => writer.abort(),
    };
  }

  public async put(key: string, data: Buffer): Promise<void> {
    await this.inner.put(key, data);
    (this.root ?? this).completed.push(`${this.prefix}${key}`);
  }

  public async createIfAbsent(key: string, data: Buffer): Promise<boolean> {
    const created = await this.inner.createIfAbsent(key, data);
    if (created) (this.root ?? this).completed.push(`${this.prefix}${key}`);
    return created;
  }

  public get(key: string): Promise<Buffer> {
    return this.inner.get(key);
  }

  public list(prefix: string): Promise<string[]> {
    return this.inner.list(prefix);
  }

  public stat(key: string): Promise<StoredObject> {
    return this.inner.stat(key);
  }

  public modifiedAt(key: string): Promise<number> {
    return this.inner.modifiedAt(key);
  }

  public async delete(key: string): Promise<void> {
    await this.inner.delete(key);
    (this.root ?? this).deleted.push(`${this.prefix}${key}`);
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('packDataset on a local folder', () => {
  const classes = ['dog', 'cat', 'bird'];
  const files = randomDataset(1, 60, classes);
  // A magic word at an aligned offset of the RecordIO payload (IRHeader 24 + 16) is escaped by
  // splitting the record; one at an unaligned offset is left as it is. Both must come back whole.
  files['cat/aligned-magic.jpg'] = Buffer.concat([Buffer.alloc(16, 1), MAGIC_BYTES, Buffer.alloc(9, 2)]);
  files['dog/unaligned-magic.jpg'] = Buffer.concat([Buffer.alloc(17, 3), MAGIC_BYTES, MAGIC_BYTES, Buffer.alloc(3, 4)]);
  let sourceDir: string;
  beforeAll(() => {
    sourceDir = sourceFolder(files);
  });

  test('every file becomes exactly one TFRecord Example holding its bytes, its name, its format and its class label', async () => {
    // GIVEN
    const options: PackFolderOptions = { format: 'tfrecord', shardCount: 4 };

    // WHEN
    const { manifest, outDir } = await packFolder(sourceDir, options);

    // THEN
    expect(manifest.labels).toEqual({ bird: 0, cat: 1, dog: 2 });
    expect(manifest.shards).toHaveLength(4);
    expect(manifest.records).toBe(Object.keys(files).length);
    expect(manifest.failures).toEqual([]);
    expect(readPacked(outDir).manifest).toEqual(manifest);
    const byKey = await expectEachFileOnce(outDir, sourceDir, files, options);
    for (const [key, record] of byKey) {
      expect({ key, label: record.label, format: record.imageFormat })
        .toEqual({ key, label: manifest.labels[key.split('/')[0]], format: key.endsWith('.png') ? 'png' : 'jpeg' });
    }
  });

  test('every file becomes exactly one RecordIO record whose IRHeader id maps back to its file through the plan', async () => {
    // GIVEN
    const options: PackFolderOptions = { format: 'recordio', shardCount: 4 };

    // WHEN
    const { manifest, outDir } = await packFolder(sourceDir, options);

    // THEN
    const { records } = readPacked(outDir);
    expect(records.map((r) => r.id)).toEqual(records.map((_, i) => i));
    for (const shard of manifest.shards) {
      const ids = records.filter((r) => r.shardKey === shard.key).map((r) => r.id);
      expect({ first: ids[0], last: ids[ids.length - 1], records: ids.length })
        .toEqual({ first: shard.firstRecordId, last: shard.lastRecordId, records: shard.records });
    }
    const byKey = await expectEachFileOnce(outDir, sourceDir, files, options);
    for (const [key, record] of byKey) {
      expect({ key, label: record.label }).toEqual({ key, label: manifest.labels[key.split('/')[0]] });
    }
  });

  test.each(FORMATS)('labels none: %s records carry label -1 and the label map is empty, so files may lie at the root', async (format) => {
    // GIVEN
    const unlabelled = { 'top.jpg': Buffer.from('at the root'), 'cat/a.jpg': Buffer.from('in a folder') };
    const dir = sourceFolder(unlabelled);
    const options: PackFolderOptions = { format, labels: 'none' };

    // WHEN
    const { manifest, outDir } = await packFolder(dir, options);

    // THEN
    expect(manifest.labels).toEqual({});
    const byKey = await expectEachFileOnce(outDir, dir, unlabelled, options);
    expect([...byKey.values()].map((r) => r.label)).toEqual([-1, -1]);
    expect((await verifyDataset(new LocalDirectorySink(outDir))).problems).toEqual([]);
  });

  test.each(FORMATS)('a zero-byte file becomes a %s record with no image bytes', async (format) => {
    // GIVEN
    const withEmpty = { 'cat/empty.jpg': Buffer.alloc(0), 'cat/full.jpg': Buffer.from('something') };
    const dir = sourceFolder(withEmpty);

    // WHEN
    const { manifest, outDir } = await packFolder(dir, { format });

    // THEN
    expect(manifest.records).toBe(2);
    const byKey = await expectEachFileOnce(outDir, dir, withEmpty, { format });
    expect(byKey.get('cat/empty.jpg')!.data.length).toBe(0);
  });

  test.each(FORMATS)('a file bigger than the target shard size still becomes a %s record, whole', async (format) => {
    // GIVEN
    const big = seededBytes('big', 3 * MIB);
    const withBig = { ...randomDataset(2, 30, ['cat', 'dog'], 20_000, 40_000), 'dog/big.png': big };
    const dir = sourceFolder(withBig);
    const options: PackFolderOptions = { format, targetShardBytes: 1 * MIB };

    // WHEN
    const { manifest, outDir } = await packFolder(dir, options);

    // THEN
    const byKey = await expectEachFileOnce(outDir, dir, withBig, options);
    const bigShard = manifest.shards.find((s) => s.key === byKey.get('dog/big.png')!.shardKey)!;
    expect(bigShard.bytes).toBeGreaterThan(3 * MIB);
    expect(manifest.shards.length).toBeGreaterThanOrEqual(4);
  });

  test.each(FORMATS)('unicode and spaces in folder and file names survive as %s keys and class names', async (format) => {
    // GIVEN
    const named = {
      'café au lait/naïve photo 1.jpg': Buffer.from('one'),
      '日本/ファイル 名.png': Buffer.from('two'),
      'emoji 🐱/🐟 fish.jpg': Buffer.from('three'),
      'plain/a b  c.jpg': Buffer.from('four'),
    };
    const dir = sourceFolder(named);
    const options: PackFolderOptions = { format, shardCount: 2 };

    // WHEN
    const { manifest, outDir } = await packFolder(dir, options);

    // THEN
    // Class names in code-point order (UTF-8 byte order): 'c' < 'e' < 'p' < U+65E5.
    expect(Object.entries(manifest.labels)).toEqual([['café au lait', 0], ['emoji 🐱', 1], ['plain', 2], ['日本', 3]]);
    const byKey = await expectEachFileOnce(outDir, dir, named, options);
    expect(byKey.get('日本/ファイル 名.png')!.label).toBe(3);
  });

  test('empty folders add no records, classes or failures', async () => {
    // GIVEN
    const dir = sourceFolder({ 'cat/a.jpg': Buffer.from('a'), 'dog/b.jpg': Buffer.from('b') });
    fs.mkdirSync(path.join(dir, 'aardvark'));
    fs.mkdirSync(path.join(dir, 'cat', 'empty', 'deeper'), { recursive: true });

    // WHEN
    const { manifest } = await packFolder(dir, { format: 'tfrecord' });

    // THEN
    expect(manifest.labels).toEqual({ cat: 0, dog: 1 });
    expect({ objects: manifest.source.objects, records: manifest.records, failures: manifest.failures })
      .toEqual({ objects: 2, records: 2, failures: [] });
  });

  test.each(FORMATS)('a single file packs into one %s shard of one record', async (format) => {
    // GIVEN
    const one = { 'only/one.jpg': Buffer.from('the one file') };
    const dir = sourceFolder(one);

    // WHEN
    const { manifest, outDir } = await packFolder(dir, { format, consumers: 1 });

    // THEN
    expect(manifest.shards).toEqual([expect.objectContaining({ records: 1, firstRecordId: 0, lastRecordId: 0 })]);
    expect(manifest.shards[0].key).toBe(`versions/${manifest.datasetVersion}/shards/part-00000-of-00001.${format === 'tfrecord' ? 'tfrecord' : 'rec'}`);
    await expectEachFileOnce(outDir, dir, one, { format });
  });

  test.each(FORMATS)('two %s runs with the same source and seed write byte-identical shards, indexes and manifest', async (format) => {
    // GIVEN
    const options: PackFolderOptions = { format, shardCount: 3, seed: 42 };

    // WHEN
    const first = await packFolder(sourceDir, options);
    const second = await packFolder(sourceDir, options);

    // THEN the versions' ids differ (each run makes its own), nothing else does
    const objects = await datasetObjects(new LocalDirectorySink(first.outDir));
    expect([...objects.keys()]).toEqual(expect.arrayContaining(['index/part-00000-of-00003.idx', 'shards/part-00002-of-00003.' + (format === 'tfrecord' ? 'tfrecord' : 'rec')]));
    if (format === 'recordio') expect([...objects.keys()]).toContain('index/all.idx');
    expectSameObjects(await datasetObjects(new LocalDirectorySink(second.outDir)), objects);
    const withoutVersion = (outDir: string) => fs.readFileSync(path.join(outDir, MANIFEST_KEY), 'utf8').replace(/v00000001-[0-9a-f]{8}/g, 'VERSION');
    expect(withoutVersion(second.outDir)).toBe(withoutVersion(first.outDir));
    expect(first.manifest.datasetVersion).not.toBe(second.manifest.datasetVersion);
  });

  test('another seed shuffles the records into a different order', async () => {
    // GIVEN
    const options: PackFolderOptions = { format: 'tfrecord', shardCount: 3 };

    // WHEN
    const first = await packFolder(sourceDir, { ...options, seed: 1 });
    const second = await packFolder(sourceDir, { ...options, seed: 2 });

    // THEN
    const order = (outDir: string) => readPacked(outDir).records.map((r) => r.filename);
    expect(order(second.outDir)).not.toEqual(order(first.outDir));
    expect([...order(second.outDir)].sort()).toEqual([...order(first.outDir)].sort());
  });

  test('each TFRecord index line gives the offset and size of one whole framed record, in order', async () => {
    // GIVEN / WHEN
    const { manifest, outDir } = await packFolder(sourceDir, { format: 'tfrecord', shardCount: 3 });

    // THEN
    const filenames: string[] = [];
    for (const shard of manifest.shards) {
      const data = fs.readFileSync(path.join(outDir, shard.key));
      const lines = parseTfRecordIndex(fs.readFileSync(path.join(outDir, shard.indexKey), 'utf8'));
      expect(lines).toHaveLength(shard.records);
      let expectedOffset = 0;
      for (const { offset, size } of lines) {
        expect(offset).toBe(expectedOffset);
        // The slice the index names is exactly one record, which DALI can read on its own.
        const alone = [...readTfRecords(data.subarray(offset, offset + size))];
        expect(alone).toHaveLength(1);
        filenames.push(decodeRecord('tfrecord', shard.key, alone[0]).filename!);
        expectedOffset += size;
      }
      expect(expectedOffset).toBe(data.length);
    }
    expect(filenames.sort()).toEqual(Object.keys(files).sort());
  });

  test('RecordIO index lines give each record id and offset; all.idx adds the bytes of the shards before', async () => {
    // GIVEN / WHEN
    const { manifest, outDir } = await packFolder(sourceDir, { format: 'recordio', shardCount: 3 });

    // THEN
    const shards = manifest.shards.map((shard) => fs.readFileSync(path.join(outDir, shard.key)));
    const expectedGlobal: Array<{ id: number; offset: number }> = [];
    let base = 0;
    manifest.shards.forEach((shard, s) => {
      const lines = parseMxnetIndex(fs.readFileSync(path.join(outDir, shard.indexKey), 'utf8'));
      expect(lines).toHaveLength(shard.records);
      lines.forEach(({ id, offset }, i) => {
        const end = i + 1 < lines.length ? lines[i + 1].offset : shards[s].length;
        const alone = [...readRecordIo(shards[s].subarray(offset, end))];
        expect(alone).toHaveLength(1);
        expect(unpackImageRecord(alone[0].payload).header.id).toBe(id);
        expectedGlobal.push({ id, offset: base + offset });
      });
      base += shards[s].length;
    });
    const global = parseMxnetIndex(fs.readFileSync(path.join(outDir, manifest.globalIndexKey!), 'utf8'));
    expect(global).toEqual(expectedGlobal);
    // What DALI's mxnet reader does: seek into the shards as one concatenated stream.
    const concatenated = Buffer.concat(shards);
    global.forEach(({ id, offset }, i) => {
      const end = i + 1 < global.length ? global[i + 1].offset : concatenated.length;
      const [record] = [...readRecordIo(concatenated.subarray(offset, end))];
      expect(unpackImageRecord(record.payload).header.id).toBe(id);
    });
    expect(global.map((entry) => entry.id)).toEqual(global.map((_, i) => i));
  });

  test('3,000 files of 2–8 KB in 6 shards: the largest shard is at most 10% larger than the smallest', async () => {
    // GIVEN
    const many = randomDataset(5, 3000, Array.from({ length: 10 }, (_, i) => `class-${i}`), 2 * 1024, 8 * 1024);
    const store = new MemoryStore();

    // WHEN
    const { manifest } = await packDataset({ source: memorySource(many), sink: store.sink(), format: 'tfrecord', seed: 7, shardCount: 6 });

    // THEN
    const sizes = manifest.shards.map((shard) => store.objects.get(shard.key)!.data.length);
    expect(sizes).toEqual(manifest.shards.map((shard) => shard.bytes));
    expect(Math.max(...sizes) / Math.min(...sizes)).toBeLessThanOrEqual(1.1);
    expect(manifest.shards.reduce((sum, shard) => sum + shard.records, 0)).toBe(3000);
  });

  test.each([
    [{ shardCount: 5, consumers: 4 }, 8],
    [{ shardCount: 6, consumers: 3 }, 6],
    [{ consumers: 3 }, 3],
  ])('with %j the shard count is %d: a multiple of the consumers', async (counts, expected) => {
    // GIVEN
    const small = randomDataset(6, 40, ['a', 'b']);
    const dir = sourceFolder(small);

    // WHEN
    const { manifest } = await packFolder(dir, { format: 'recordio', ...counts });

    // THEN
    expect(manifest.shards.map((shard) => inVersion(shard.key)))
      .toEqual(Array.from({ length: expected }, (_, i) => `shards/part-${String(i).padStart(5, '0')}-of-${String(expected).padStart(5, '0')}.rec`));
    expect(manifest.sizing.multipleOfConsumers).toBe(true);
    expect(manifest.shards.every((shard) => shard.records > 0)).toBe(true);
  });

  test('objects show only when complete, no partial files remain; the claim comes after every object of the version, the root manifest last', async () => {
    // GIVEN
    const outDir = folder('out');
    const sink = new RecordingSink(new LocalDirectorySink(outDir), outDir);

    // WHEN
    const { manifest } = await packDataset({ source: new LocalDirectorySource(sourceDir), sink, format: 'recordio', seed: 1, shardCount: 4 });

    // THEN
    const layout = new VersionLayout(manifest.datasetVersion);
    const claim = claimKey(1);
    expect(sink.visibleWhileWriting).toEqual([]);
    expect(sink.completed.slice(-2)).toEqual([claim, MANIFEST_KEY]);
    const versionObjects = [...manifest.shards.flatMap((s) => [s.key, s.indexKey, s.membersKey]), layout.globalIndexKey, layout.manifestKey];
    expect([...sink.completed].sort()).toEqual([...versionObjects, claim, MANIFEST_KEY].sort());
    expect(listFiles(outDir)).toEqual([...versionObjects, claim, MANIFEST_KEY].sort());
  });

  test('packing again into the same folder publishes a new version and leaves every object of the first byte-identical', async () => {
    // GIVEN a RecordIO version with 4 shards
    const outDir = folder('out');
    const sink = new LocalDirectorySink(outDir);
    const first = await packDataset({ source: new LocalDirectorySource(sourceDir), sink, format: 'recordio', seed: 1, shardCount: 4 });
    const before = new Map(listFiles(outDir).filter((key) => key.startsWith('versions/')).map((key) => [key, fs.readFileSync(path.join(outDir, key))]));

    // WHEN a TFRecord run with 2 shards writes into the same folder (a full repack: the format changed)
    const second = await packDataset({ source: new LocalDirectorySource(sourceDir), sink, format: 'tfrecord', seed: 1, shardCount: 2 });

    // THEN the root names the second; the first's objects are untouched (kept for the retention period)
    expect(second.fullRepackReason).toMatch(/format changed/);
    expect(second.manifest).toMatchObject({ sequence: 2, previousVersion: first.manifest.datasetVersion });
    expect(JSON.parse(fs.readFileSync(path.join(outDir, MANIFEST_KEY), 'utf8')).datasetVersion).toBe(second.manifest.datasetVersion);
    for (const [key, bytes] of before) expect({ key, same: fs.readFileSync(path.join(outDir, key)).equals(bytes) }).toEqual({ key, same: true });
    expect((await verifyDataset(sink)).problems).toEqual([]);
    expect((await verifyDataset(sink, { version: first.manifest.datasetVersion })).problems).toEqual([]);
  });

  test('a rerun that fails while writing shards publishes nothing: the first version stays current, nothing of the failed one remains', async () => {
    // GIVEN a complete dataset
    const outDir = folder('out');
    const first = await packDataset({ source: new LocalDirectorySource(sourceDir), sink: new LocalDirectorySink(outDir), format: 'tfrecord', seed: 1, shardCount: 2 });
    const before = listFiles(outDir);
    const inner = new LocalDirectorySink(outDir);
    const failing = sinkWithCreate(inner, async () => { throw new Error('EIO: i/o error'); });

    // WHEN a full rerun fails while writing shards
    const rerun = packDataset({ source: new LocalDirectorySource(sourceDir), sink: failing, format: 'tfrecord', seed: 1, shardCount: 2, fullRepack: true });

    // THEN
    await expect(rerun).rejects.toThrow(/EIO/);
    expect(listFiles(outDir)).toEqual(before);
    expect(JSON.parse(fs.readFileSync(path.join(outDir, MANIFEST_KEY), 'utf8')).datasetVersion).toBe(first.manifest.datasetVersion);
    expect((await verifyDataset(inner)).problems).toEqual([]);
  });

  test('when the abort after a failed write fails too, the error still carries the write\'s own reason', async () => {
    // GIVEN a sink whose writes and aborts both fail (the store went away)
    const outDir = folder('out');
    const inner = new LocalDirectorySink(outDir);
    const broken = sinkWithCreate(inner, async (key) => {
      const writer = await inner.create(key);
      return {
        ...writer,
        write: () => Promise.reject(new Error('ECONNRESET: socket hang up')),
        abort: async () => {
          await writer.abort();
          throw new Error('ECONNREFUSED: connection refused');
        },
      };
    });

    // WHEN
    const packing = packDataset({ source: new LocalDirectorySource(sourceDir), sink: broken, format: 'tfrecord', seed: 1, shardCount: 1 });

    // THEN
    await expect(packing).rejects.toThrow(/ECONNRESET: socket hang up; aborting shards\/part-00000-of-00001\.tfrecord failed too: ECONNREFUSED/);
    expect(listFiles(outDir)).toEqual([]);
  });

  test('a shard whose write fails leaves neither the shard nor a partial file nor a manifest', async () => {
    // GIVEN
    const outDir = folder('out');
    const inner = new LocalDirectorySink(outDir);
    const failing = sinkWithCreate(inner, async (key) => {
      const writer = await inner.create(key);
      if (!key.includes('part-00001-')) return writer;
      return { ...writer, write: () => Promise.reject(new Error('ENOSPC: no space left on device')) };
    });

    // WHEN
    const packing = packDataset({
      source: new LocalDirectorySource(sourceDir), sink: failing, format: 'tfrecord', seed: 1, shardCount: 3, parallelShards: 1,
    });

    // THEN
    await expect(packing).rejects.toThrow(/no space left/);
    // The shards written before the failure went too: the version was never published.
    expect(listFiles(outDir)).toEqual([]);
  });

  test('a failed shard stops the run: no other shard starts, and it rejects only once the shards in flight are done', async () => {
    // GIVEN two shards written at once; shard 0 starts only after shard 1 has failed and been dropped
    const outDir = folder('out');
    const inner = new LocalDirectorySink(outDir);
    const created: string[] = [];
    const open = new Set<string>();
    let shard1Dropped!: () => void;
    const afterShard1Dropped = new Promise<void>((resolve) => { shard1Dropped = resolve; });
    const sink = sinkWithCreate(inner, async (key) => {
      created.push(key);
      open.add(key);
      if (key.includes('part-00000-')) await afterShard1Dropped;
      const writer = await inner.create(key);
      const failing = key.includes('part-00001-');
      return {
        write: failing ? () => Promise.reject(new Error('EIO: write failed')) : (chunks) => writer.write(chunks),
        complete: async () => {
          await writer.complete();
          open.delete(key);
        },
        abort: async () => {
          await writer.abort();
          open.delete(key);
          if (failing) shard1Dropped();
        },
      };
    });

    // WHEN
    const packing = packDataset({
      source: new LocalDirectorySource(sourceDir), sink, format: 'tfrecord', seed: 1, shardCount: 8, parallelShards: 2,
    });

    // THEN
    await expect(packing).rejects.toThrow(/write failed/);
    expect({ open: [...open], created: created.map(inVersion) }).toEqual({
      open: [],
      created: ['shards/part-00000-of-00008.tfrecord', 'shards/part-00001-of-00008.tfrecord'],
    });
    expect(listFiles(outDir)).toEqual([]);
  });

  describe('files that cannot be read', () => {
    test.each(FORMATS)('a dangling symbolic link is a %s failure with its reason; the totals add up and verify passes', async (format) => {
      // GIVEN
      const dir = sourceFolder(randomDataset(8, 10, ['cat', 'dog']));
      fs.symlinkSync(path.join(dir, 'nowhere.jpg'), path.join(dir, 'cat', 'broken link.jpg'));

      // WHEN
      const { manifest, outDir } = await packFolder(dir, { format, allowMissing: true });

      // THEN
      expect(manifest.failures).toEqual([{ key: 'cat/broken link.jpg', reason: expect.stringMatching(/^ENOENT: no such file or directory/) }]);
      expect({ objects: manifest.source.objects, records: manifest.records }).toEqual({ objects: 11, records: 10 });
      expect((await verifyDataset(new LocalDirectorySink(outDir))).problems).toEqual([]);
    });

    test.each(READ_PATHS)('a file deleted between listing and reading (%s) is a failure; the other files are packed', async (_path, inPlace) => {
      // GIVEN
      const present = randomDataset(9, 12, ['cat', 'dog']);
      const dir = sourceFolder(present);
      const local = new LocalDirectorySource(dir);
      const [vanishing] = Object.keys(present);
      const source = sourceWith(local, {
        list: async function* list() {
          const listed = await listAll(local);
          fs.rmSync(path.join(dir, vanishing));
          yield listed;
        },
      }, inPlace);

      // WHEN
      const { manifest, outDir } = await packFolder(dir, { format: 'tfrecord', source, allowMissing: true });

      // THEN
      expect(manifest.failures).toEqual([{ key: vanishing, reason: expect.stringMatching(/^ENOENT/) }]);
      expect(manifest.records + manifest.failures.length).toBe(manifest.source.objects);
      const { [vanishing]: _gone, ...packed } = present;
      await expectEachFileOnce(outDir, dir, packed, { format: 'tfrecord' });
    });

    test.each(READ_PATHS)('files that grew or shrank after listing (%s) are packed whole, as they are when read', async (_path, inPlace) => {
      // GIVEN one file grows past the reused buffer's first size, one shrinks, one is emptied
      const original = randomDataset(11, 30, ['cat', 'dog']);
      const dir = sourceFolder(original);
      const local = new LocalDirectorySource(dir);
      const [growing, shrinking, emptied] = Object.keys(original);
      const changed = {
        ...original,
        [growing]: seededBytes('grown', 200_000),
        [shrinking]: original[shrinking].subarray(0, 10),
        [emptied]: Buffer.alloc(0),
      };
      const source = sourceWith(local, {
        list: async function* list() {
          const listed = await listAll(local);
          writeFiles(dir, { [growing]: changed[growing], [shrinking]: changed[shrinking], [emptied]: changed[emptied] });
          yield listed;
        },
      }, inPlace);

      // WHEN
      const { manifest, outDir } = await packFolder(dir, { format: 'tfrecord', shardCount: 3, source });

      // THEN
      expect(manifest.failures).toEqual([]);
      await expectEachFileOnce(outDir, dir, changed, { format: 'tfrecord' });
      expect((await verifyDataset(new LocalDirectorySink(outDir))).problems).toEqual([]);
    });

    test('a file gone between the folder read and its stat is listed, then reported as a failure', async () => {
      // GIVEN the stat of the listing runs after one file was deleted
      const present = randomDataset(12, 10, ['cat']);
      const dir = sourceFolder(present);
      const [vanishing] = Object.keys(present).sort();
      const source = new LocalDirectorySource(dir, {
        statFiles: async (keys) => {
          fs.rmSync(path.join(dir, vanishing));
          return new LocalDirectorySource(dir).stat(keys);
        },
      });

      // WHEN
      const { manifest } = await packFolder(dir, { format: 'tfrecord', source, allowMissing: true });

      // THEN
      expect(manifest.source.objects).toBe(10);
      expect(manifest.failures).toEqual([{ key: vanishing, reason: expect.stringMatching(/^ENOENT/) }]);
      expect(manifest.records).toBe(9);
    });

    test('failures are listed in key order with the error code and message of each read', async () => {
      // GIVEN
      const dir = sourceFolder(randomDataset(10, 20, ['cat', 'dog']));
      const local = new LocalDirectorySource(dir);
      const broken: Record<string, string> = { 'dog/00001.jpg': 'ENOENT', 'cat/00002.jpg': 'EACCES' };
      const source = sourceWith(local, {
        read: (key) => (broken[key]
          ? Promise.reject(Object.assign(new Error(`trouble reading ${key}`), { code: broken[key] }))
          : local.read(key)),
      });

      // WHEN
      const { manifest, outDir } = await packFolder(dir, { format: 'recordio', shardCount: 2, source, allowMissing: true });

      // THEN
      expect(manifest.failures).toEqual([
        { key: 'cat/00002.jpg', reason: 'EACCES: trouble reading cat/00002.jpg' },
        { key: 'dog/00001.jpg', reason: 'ENOENT: trouble reading dog/00001.jpg' },
      ]);
      expect(manifest.records).toBe(18);
      expect((await verifyDataset(new LocalDirectorySink(outDir))).problems).toEqual([]);
    });

    test.each(READ_PATHS)('a read error that says nothing of the file (EIO) fails the run %s: no failure listed, no manifest', async (_path, inPlace) => {
      // GIVEN
      const dir = sourceFolder(randomDataset(11, 20, ['cat', 'dog']));
      const local = new LocalDirectorySource(dir);
      const failing = (key: string) => Object.assign(new Error(`EIO: i/o error, read '${dir}/${key}'`), { code: 'EIO' });
      const source: PackingSource = inPlace
        ? { uri: local.uri, list: () => local.list(), read: (key) => local.read(key),
          readInto: (key, size, scratch) => { if (key === 'dog/00001.jpg') throw failing(key); return local.readInto(key, size, scratch); } }
        : sourceWith(local, { read: (key) => (key === 'dog/00001.jpg' ? Promise.reject(failing(key)) : local.read(key)) });
      const outDir = folder('out');

      // WHEN
      const packing = packDataset({ source, sink: new LocalDirectorySink(outDir), format: 'recordio', seed: 1, shardCount: 2 });

      // THEN
      await expect(packing).rejects.toThrow(/EIO: i\/o error, read '.*dog\/00001\.jpg'/);
      expect(fs.existsSync(path.join(outDir, MANIFEST_KEY))).toBe(false);
    });

    test('when no file can be read, the manifest still accounts for each one, lists no empty shard, and verify passes', async () => {
      // GIVEN
      const dir = folder('src');
      fs.mkdirSync(path.join(dir, 'cat'));
      for (const name of ['a.jpg', 'b.jpg']) fs.symlinkSync(path.join(dir, 'missing', name), path.join(dir, 'cat', name));

      // WHEN
      const { manifest, outDir } = await packFolder(dir, { format: 'recordio', allowMissing: true });

      // THEN
      expect(manifest.records).toBe(0);
      expect(manifest.failures.map((f) => f.key)).toEqual(['cat/a.jpg', 'cat/b.jpg']);
      expect(manifest.shards).toEqual([]);
      expect((await verifyDataset(new LocalDirectorySink(outDir))).problems).toEqual([]);
    });

    test('a file the format rejects is a failure naming the file and the reason; the shard keeps the others', async () => {
      // GIVEN a record id whose low 32 bits are the RecordIO magic word, which DALI would misread
      const dir = sourceFolder({ 'cat/a.jpg': Buffer.from('first'), 'cat/b.jpg': Buffer.from('second') });
      const outDir = folder('out');
      const planned: PlannedShard = {
        index: 0,
        name: 'part-00000-of-00001',
        bytes: 11,
        records: [
          { key: 'cat/a.jpg', size: 5, label: 0, recordId: RECORDIO_MAGIC },
          { key: 'cat/b.jpg', size: 6, label: 0, recordId: RECORDIO_MAGIC + 1 },
        ],
      };
      const filesDone: number[] = [];

      // WHEN
      const result = await writeShard(planned, {
        source: new LocalDirectorySource(dir), sink: new LocalDirectorySink(outDir), format: recordioFormat, readConcurrency: 2,
        onFile: (bytes) => filesDone.push(bytes),
      });

      // THEN
      expect(result.failures).toEqual([{ key: 'cat/a.jpg', reason: expect.stringMatching(/^cat\/a\.jpg: record id 3470205706 contains the RecordIO magic word/) }]);
      expect(result.shard).toMatchObject({ records: 1, firstRecordId: RECORDIO_MAGIC + 1, lastRecordId: RECORDIO_MAGIC + 1 });
      const [record] = [...readRecordIo(fs.readFileSync(path.join(outDir, result.shard.key)))];
      expect(unpackImageRecord(record.payload).data.toString()).toBe('second');
      expect(filesDone).toEqual([5, 6]);
    });
  });
});

describe('shard sizes count framed bytes', () => {
  test.each(FORMATS)('%s: 15,000 files of 60 bytes at a 1 MiB target give shards of at most 1 MiB as written', async (format) => {
    // GIVEN: 0.9 MB of files, but more than twice that once framed (TFRecord's Example, RecordIO's headers)
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 15_000; i++) files[`c${i % 3}/${String(i).padStart(5, '0')}.jpg`] = seededBytes(`t${i}`, 60);
    const store = new MemoryStore();

    // WHEN
    const { manifest } = await packDataset({ source: memorySource(files), sink: store.sink(), format, seed: 7, targetShardBytes: MIB });

    // THEN
    expect(manifest.records).toBe(15_000);
    expect(manifest.shards.length).toBeGreaterThan(1);
    for (const shard of manifest.shards) expect(store.objects.get(shard.key)!.data.length).toBeLessThanOrEqual(MIB);
  });

  test.each(FORMATS)('%s: 20,000 files of 6.7 KB at 128 MiB are planned within 128 MiB once framed', (format) => {
    // GIVEN: 134,000,000 bytes as listed, under 128 MiB; framed, over it
    const files = Array.from({ length: 20_000 }, (_, i) => ({ key: `class_${String(i % 10).padStart(3, '0')}/${String(i).padStart(6, '0')}.jpg`, size: 6_700 }));
    const framing = shardFormat(format);

    // WHEN
    const plan = planShards(files, { seed: 1, targetShardBytes: 128 * MIB, recordBytes: (key, size) => framing.recordBytes(key, size) });

    // THEN: each shard's records, framed as the writer frames them, fit
    expect(plan.shards.length).toBe(2);
    for (const shard of plan.shards) {
      const framed = shard.records.reduce((sum, r) => sum + framing.encode({ data: Buffer.alloc(r.size), key: r.key, label: r.label, recordId: r.recordId }).size, 0);
      expect(framed).toBeLessThanOrEqual(shard.bytes);
      expect(shard.bytes).toBeLessThanOrEqual(128 * MIB);
    }
  });
});

describe('verifyDataset', () => {
  const files = randomDataset(11, 24, ['cat', 'dog']);
  const clean: Partial<Record<ShardFormatName, { outDir: string; manifest: Manifest }>> = {};
  beforeAll(async () => {
    const dir = sourceFolder(files);
    for (const format of FORMATS) clean[format] = await packFolder(dir, { format, shardCount: 3 });
  });

  /** A copy of the clean dataset of `format`, to break. */
  function copyOf(format: ShardFormatName): { outDir: string; manifest: Manifest } {
    const outDir = folder('broken');
    fs.cpSync(clean[format]!.outDir, outDir, { recursive: true });
    return { outDir, manifest: clean[format]!.manifest };
  }

  function edit(outDir: string, key: string, change: (data: Buffer) => Buffer | string): void {
    const file = path.join(outDir, key);
    fs.writeFileSync(file, change(fs.readFileSync(file)));
  }

  test.each(FORMATS)('a sound %s dataset has no problems and every shard, record and byte is checked', async (format) => {
    // GIVEN
    const { outDir, manifest } = clean[format]!;

    // WHEN
    const report = await verifyDataset(new LocalDirectorySink(outDir));

    // THEN
    expect(report.problems).toEqual([]);
    expect({ shards: report.shardsChecked, records: report.recordsChecked, bytes: report.bytesChecked }).toEqual({
      shards: 3, records: 24, bytes: manifest.shards.reduce((sum, shard) => sum + shard.bytes, 0),
    });
  });

  test.each(FORMATS)('each %s shard is listed with the CRC-32 and CRC-32C of its bytes, as S3 reports them', (format) => {
    // GIVEN
    const { outDir, manifest } = clean[format]!;

    // THEN
    for (const shard of manifest.shards) {
      const data = fs.readFileSync(path.join(outDir, shard.key));
      expect({ crc32: shard.crc32, crc32c: shard.crc32c }).toEqual({
        crc32: crc32Base64(zlibCrc32(data)), crc32c: crc32cBase64(crc32c(data)),
      });
    }
  });

  test('a manifest packed before shards listed their CRC-32 still verifies', async () => {
    // GIVEN
    const { outDir, manifest } = copyOf('tfrecord');
    for (const key of [MANIFEST_KEY, new VersionLayout(manifest.datasetVersion).manifestKey]) {
      edit(outDir, key, (data) => {
        const old = JSON.parse(data.toString('utf8')) as Manifest;
        return JSON.stringify({ ...old, shards: old.shards.map(({ crc32: _, ...shard }) => shard) });
      });
    }

    // WHEN
    const report = await verifyDataset(new LocalDirectorySink(outDir));

    // THEN
    expect(report.problems).toEqual([]);
    expect(report.shardsChecked).toBe(3);
  });

  type Corruption = (outDir: string, manifest: Manifest) => void;
  const flipPayloadByte: Corruption = (outDir, m) => edit(outDir, m.shards[0].key, (data) => {
    // Past the framing and the IRHeader: inside the first file's bytes in both formats.
    data[40] ^= 0xff;
    return data;
  });
  const truncate: Corruption = (outDir, m) => edit(outDir, m.shards[1].key, (data) => data.subarray(0, data.length - 5));
  const moveFirstIndexLine: Corruption = (outDir, m) => edit(outDir, m.shards[0].indexKey,
    (data) => data.toString('utf8').replace(/^\d+/, (n) => String(Number(n) + 1)));
  const swapIndexColumns: Corruption = (outDir, m) => edit(outDir, m.shards[2].indexKey,
    (data) => data.toString('utf8').replace(/^(\d+)(\s)(\d+)$/m, '$3$2$1'));
  const garbleIndexLine: Corruption = (outDir, m) => edit(outDir, m.shards[0].indexKey,
    (data) => data.toString('utf8').replace(/\n/, '\nnot an index line\n'));
  const globalIndexKey = (m: Manifest) => m.globalIndexKey!;
  const shiftGlobalOffset: Corruption = (outDir, m) => edit(outDir, globalIndexKey(m),
    (data) => data.toString('utf8').replace(/\t(\d+)\n$/, (_, n) => `\t${Number(n) + 4}\n`));
  const appendGlobalLine: Corruption = (outDir, m) => edit(outDir, globalIndexKey(m), (data) => `${data.toString('utf8')}99\t0\n`);
  const remove = (key: (m: Manifest) => string): Corruption => (outDir, m) => fs.rmSync(path.join(outDir, key(m)));
  const overstateRecords: Corruption = (outDir) => edit(outDir, MANIFEST_KEY,
    (data) => data.toString('utf8').replace(/\n {2}"records": (\d+)/, (_, n) => `\n  "records": ${Number(n) + 1}`));

  const extraShardKey = (m: Manifest) => `versions/${m.datasetVersion}/shards/part-extra.tfrecord`;
  const extraShard: Corruption = (outDir, m) => fs.copyFileSync(path.join(outDir, m.shards[0].key), path.join(outDir, extraShardKey(m)));
  const editManifest = (change: (m: Manifest) => void): Corruption => (outDir) => edit(outDir, MANIFEST_KEY, (data) => {
    const m = JSON.parse(data.toString('utf8')) as Manifest;
    change(m);
    return JSON.stringify(m);
  });
  const keyOutside = editManifest((m) => Object.assign(m.shards[1], { key: '../../etc/hostname' }));
  const listedTwice = editManifest((m) => m.shards.push(m.shards[0]));
  const swapLabels = editManifest((m) => {
    const [first, second] = Object.keys(m.labels);
    Object.assign(m, { labels: { ...m.labels, [first]: m.labels[second], [second]: m.labels[first] } });
  });

  test.each<[string, ShardFormatName, Corruption, (m: Manifest) => string, RegExp[]]>([
    ['a manifest key that leaves the dataset', 'tfrecord', keyOutside, () => MANIFEST_KEY, [/key "\.\.\/\.\.\/etc\/hostname" leaves the dataset/]],
    ['a label map whose classes were swapped', 'tfrecord', swapLabels, (m) => m.shards[0].key, [/has label \d, but the label map gives its class '\w+' \d/]],
    ['a shard listed twice', 'recordio', listedTwice, (m) => m.shards[0].key, [/listed more than once in manifest\.json/]],
    ['a flipped byte in a TFRecord', 'tfrecord', flipPayloadByte, (m) => m.shards[0].key, [/CRC32C .*, the manifest says/, /CRC32 .*, the manifest says/, /TFRecord at byte 0: bad data crc/]],
    ['a flipped byte in a RecordIO image', 'recordio', flipPayloadByte, (m) => m.shards[0].key, [/CRC32C .*, the manifest says/, /CRC32 .*, the manifest says/]],
    ['a truncated TFRecord shard', 'tfrecord', truncate, (m) => m.shards[1].key, [/\d+ bytes, the manifest says \d+/, /truncated record/]],
    ['a truncated RecordIO shard', 'recordio', truncate, (m) => m.shards[1].key, [/\d+ bytes, the manifest says \d+/, /truncated record/]],
    ['a moved TFRecord index line', 'tfrecord', moveFirstIndexLine, (m) => m.shards[0].indexKey, [/does not match the records of versions\/v\d+-[0-9a-f]+\/shards\//]],
    ['a RecordIO index line with another id', 'recordio', moveFirstIndexLine, (m) => m.shards[0].indexKey, [/does not match the records of versions\/v\d+-[0-9a-f]+\/shards\//]],
    ['a TFRecord index line with size and offset swapped', 'tfrecord', swapIndexColumns, (m) => m.shards[2].indexKey, [/does not match/]],
    ['a garbled index line', 'recordio', garbleIndexLine, (m) => m.shards[0].indexKey, [/index line 2: expected/]],
    ['a shifted offset in all.idx', 'recordio', shiftGlobalOffset, globalIndexKey, [/does not match the records of the shards in order/]],
    ['a line too many at the end of all.idx', 'recordio', appendGlobalLine, globalIndexKey, [/does not match the records of the shards in order/]],
    ['a deleted all.idx', 'recordio', remove(globalIndexKey), globalIndexKey, [/cannot be read/]],
    ['a deleted shard', 'tfrecord', remove((m) => m.shards[2].key), (m) => m.shards[2].key, [/cannot be read \(ENOENT/]],
    ['a deleted index', 'tfrecord', remove((m) => m.shards[1].indexKey), (m) => m.shards[1].indexKey, [/cannot be read \(ENOENT/]],
    ['a deleted manifest.json', 'tfrecord', remove(() => MANIFEST_KEY), () => MANIFEST_KEY, [/cannot be read .*incomplete or not a packed dataset/]],
    ['a manifest whose record total is off', 'recordio', overstateRecords, () => MANIFEST_KEY, [/the shards hold 24 records but the manifest says 25/]],
  ])('%s is reported with the key of the object', async (_what, format, corrupt, key, expected) => {
    // GIVEN
    const { outDir, manifest } = copyOf(format);
    corrupt(outDir, manifest);

    // WHEN
    const report = await verifyDataset(new LocalDirectorySink(outDir));

    // THEN
    for (const pattern of expected) {
      expect(report.problems).toContainEqual(expect.stringMatching(new RegExp(`^${escapeRegExp(key(manifest))}: .*${pattern.source}`)));
    }
  });

  test('a shard in the version\'s shards/ that the manifest does not list is a leftover, named, and no problem of the version', async () => {
    // GIVEN
    const { outDir, manifest } = copyOf('tfrecord');
    extraShard(outDir, manifest);

    // WHEN
    const report = await verifyDataset(new LocalDirectorySink(outDir));

    // THEN
    expect(report.problems).toEqual([]);
    expect(report.leftovers).toEqual([extraShardKey(manifest)]);
  });
});
