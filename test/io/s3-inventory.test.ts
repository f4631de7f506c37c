import { gzipSync } from 'node:zlib';
import type { S3Client } from '@aws-sdk/client-s3';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { S3InventoryLocation } from '../../lambda/io/s3-inventory';
import type { S3RetryOptions } from '../../lambda/io/s3-retry';
import { S3Sink } from '../../lambda/io/s3-sink';
import { S3Source } from '../../lambda/io/s3-source';
import { packDataset } from '../../lambda/packing/pack';
import { withoutVersionIds } from '../support/dataset-objects';
import { listAll } from '../../lambda/io/storage';
import { seededBytes } from '../support/local-files';
import type { S3Fixture} from '../support/s3-fixture';
import { startS3Fixture } from '../support/s3-fixture';
import type { InventoryReport} from '../support/s3-inventory-report';
import { csvLine, currentInventoryLines, inventoryKey, writeInventoryReport } from '../support/s3-inventory-report';
import { createTestBucket, putTestObjects } from '../support/s3-server';

const FAST_RETRY: S3RetryOptions = { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 20, retryBudgetMs: 0 };
const VERSIONED_SCHEMA = 'Bucket, Key, VersionId, IsLatest, IsDeleteMarker, Size, LastModifiedDate';
const REPORT_FOLDER = 'inventory/src/daily/';

let fixture: S3Fixture;
let client: S3Client;
let bucket: string;
const objects: Record<string, Buffer> = {};

beforeAll(async () => {
  fixture = await startS3Fixture();
  client = fixture.client;
  bucket = await createTestBucket(client, 's3-inventory');
  for (let i = 0; i < 120; i++) {
    const key = `raw/${['cat', 'dog'][i % 2]}/${String(i).padStart(4, '0')}.jpg`;
    objects[key] = seededBytes(key, 100 + ((i * 53) % 900));
  }
  // Keys that URL encoding must carry: a space, a plus, unicode, a percent sign.
  for (const key of ['raw/cat/with space.jpg', 'raw/cat/a+b.jpg', 'raw/dog/chien-été.jpg', 'raw/dog/100%.jpg']) objects[key] = seededBytes(key, 321);
  await putTestObjects(client, bucket, { ...objects, 'raw/cat/': Buffer.alloc(0), 'other/x.jpg': Buffer.from('outside the prefix') }, 16);
}, 60_000);

afterAll(() => fixture?.stop());

afterEach(() => fixture.reset());

/** Every object of the bucket, as ListObjectsV2 sees it. */
async function bucketListing(): Promise<Array<{ key: string; size: number; modified: Date }>> {
  const rows: Array<{ key: string; size: number; modified: Date }> = [];
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    for (const o of page.Contents ?? []) rows.push({ key: o.Key!, size: o.Size!, modified: o.LastModified! });
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return rows;
}

/** Writes a report of this suite's bucket into its report folder. */
function writeReport(stamp: string, lines: string[], options: Partial<InventoryReport> = {}): Promise<string> {
  return writeInventoryReport(client, bucket, { folder: REPORT_FOLDER, stamp, lines, ...options });
}

/** The lines of an unversioned report of the bucket as it is now (its own reports left out). */
async function currentLines(): Promise<string[]> {
  return (await currentInventoryLines(client, bucket, '')).filter((line) => !line.includes(`"${REPORT_FOLDER.split('/')[0]}%2F`));
}

function inventorySource(inventory: S3InventoryLocation, s3: S3Client = client): S3Source {
  return new S3Source({ client: s3, bucket, prefix: 'raw/', retry: FAST_RETRY, inventory });
}

describe('S3Source from an S3 Inventory report', () => {
  test('lists what ListObjectsV2 lists under the prefix: decoded keys, sizes, change times; no folder markers', async () => {
    // GIVEN
    const manifestKey = await writeReport('2026-11-20T00-00Z', await currentLines());

    // WHEN
    const fromInventory = await listAll(inventorySource({ bucket, key: manifestKey }));
    const fromListing = await listAll(new S3Source({ client, bucket, prefix: 'raw/' }));

    // THEN
    const byKey = (a: { key: string }, b: { key: string }) => a.key.localeCompare(b.key);
    expect(fromInventory.sort(byKey)).toEqual(fromListing.sort(byKey));
    expect(fromInventory.map((f) => f.key)).toEqual(expect.arrayContaining(['cat/with space.jpg', 'cat/a+b.jpg', 'dog/chien-été.jpg', 'dog/100%.jpg']));
    expect(fromInventory).toHaveLength(Object.keys(objects).length);
  });

  test('given the report folder, reads the newest dated manifest', async () => {
    // GIVEN an older report that lists one object only, and a newer one that lists them all
    const lines = await currentLines();
    await writeReport('2026-11-18T00-00Z', lines.slice(0, 1), { files: 1 });
    await writeReport('2026-11-21T00-00Z', lines);

    // WHEN
    const listed = await listAll(inventorySource({ bucket, key: REPORT_FOLDER }));

    // THEN
    expect(listed).toHaveLength(Object.keys(objects).length);
  });

  test('packs the same shards from the report as from ListObjectsV2', async () => {
    // GIVEN
    const manifestKey = await writeReport('2026-11-20T00-00Z', await currentLines());
    const options = { format: 'tfrecord' as const, seed: 5, shardCount: 3 };

    // WHEN
    const { manifest: listed } = await packDataset({ source: new S3Source({ client, bucket, prefix: 'raw/' }), sink: new S3Sink({ client, bucket, prefix: 'packed-list/' }), ...options });
    const { manifest: inventoried } = await packDataset({ source: inventorySource({ bucket, key: manifestKey }), sink: new S3Sink({ client, bucket, prefix: 'packed-inv/' }), ...options });

    // THEN
    expect(withoutVersionIds(inventoried)).toEqual(withoutVersionIds(listed));
    expect(inventoried.records).toBe(Object.keys(objects).length);
  });

  test('a versioned report counts current versions only: older versions and delete markers are skipped', async () => {
    // GIVEN
    const now = new Date().toISOString();
    const current = (await bucketListing()).filter((o) => o.key.startsWith('raw/'));
    const lines = current.flatMap((o, i) => [
      csvLine([bucket, inventoryKey(o.key), `v${i}`, 'true', 'false', String(o.size), o.modified.toISOString()]),
      csvLine([bucket, inventoryKey(o.key), `old${i}`, 'false', 'false', '7', now]),
    ]);
    lines.push(csvLine([bucket, inventoryKey('raw/cat/deleted.jpg'), 'dm', 'true', 'true', '', now]));
    const manifestKey = await writeReport('2026-11-20T00-00Z', lines, { schema: VERSIONED_SCHEMA });

    // WHEN
    const listed = await listAll(inventorySource({ bucket, key: manifestKey }));

    // THEN
    expect(listed.map((f) => f.key).sort()).toEqual(current.filter((o) => !o.key.endsWith('/')).map((o) => o.key.slice('raw/'.length)).sort());
  });

  test('a reset of the GET of a data file is retried without listing any row twice', async () => {
    // GIVEN
    const manifestKey = await writeReport('2026-11-20T00-00Z', await currentLines(), { files: 1 });
    let reset = false;
    fixture.proxy.onRequest((request) => {
      if (!reset && request.method === 'GET' && request.url.includes('/data/')) {
        reset = true;
        fixture.proxy.resetNext(1);
      }
    });

    // WHEN
    const listed = await listAll(inventorySource({ bucket, key: manifestKey }, fixture.proxied));

    // THEN
    expect(reset).toBe(true);
    expect(fixture.proxy.faults).toBeGreaterThan(0);
    expect(new Set(listed.map((f) => f.key)).size).toBe(listed.length);
    expect(listed).toHaveLength(Object.keys(objects).length);
  });

  test.each<[string, () => Promise<S3InventoryLocation>, RegExp]>([
    ['an ORC report', async () => ({ bucket, key: await writeReport('2026-11-20T00-00Z', [], { format: 'ORC' }) }),
      /inventory format 'ORC' cannot be read; configure the inventory with the CSV format/],
    ['a report of another bucket', async () => ({ bucket, key: await writeReport('2026-11-20T00-00Z', [], { sourceBucket: 'someone-else' }) }),
      /lists bucket 'someone-else', not the source bucket/],
    ['a report without sizes', async () => ({ bucket, key: await writeReport('2026-11-20T00-00Z', [], { schema: 'Bucket, Key, LastModifiedDate' }) }),
      /lacks the field\(s\) Size .*add Size and LastModifiedDate/],
    ['a row with fields missing', async () => ({ bucket, key: await writeReport('2026-11-20T00-00Z', [csvLine([bucket, 'raw/x.jpg'])], { files: 1 }) }),
      /data\/2026-11-20T00-00Z-0\.csv\.gz line 1: 2 fields, the fileSchema names 5/],
    ['a folder without a report', async () => ({ bucket, key: 'inventory/nothing-here/' }),
      /no inventory report under s3:\/\/.*\/inventory\/nothing-here\/: expected <YYYY-MM-DDTHH-MMZ>\/manifest\.json/],
    ['a file that is not gzip', async () => {
      const key = await writeReport('2026-11-20T00-00Z', [], { files: 1 });
      await putTestObjects(client, bucket, { [`${REPORT_FOLDER}data/2026-11-20T00-00Z-0.csv.gz`]: Buffer.from('"not","gzipped"\n') });
      return { bucket, key };
    }, /2026-11-20T00-00Z-0\.csv\.gz: not a gzipped CSV inventory file/],
    ['a data file replaced after the manifest', async () => {
      const key = await writeReport('2026-11-20T00-00Z', await currentLines(), { files: 1 });
      await putTestObjects(client, bucket, { [`${REPORT_FOLDER}data/2026-11-20T00-00Z-0.csv.gz`]: gzipSync(Buffer.from((await currentLines()).slice(1).join(''))) });
      return { bucket, key };
    }, /MD5 differs from the manifest's [0-9a-f]{32}: the file is damaged or was replaced/],
  ])('%s is refused with an error naming the report and what to do', async (_case, location, expected) => {
    await expect(listAll(inventorySource(await location()))).rejects.toThrow(expected);
  });
});
