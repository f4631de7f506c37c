import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { S3Client } from '@aws-sdk/client-s3';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { parse } from 'csv-parse';
import { getObjectBytes, listPages } from './s3-location';
import type { S3RetryOptions} from './s3-retry';
import { S3StorageError, withS3Retry } from './s3-retry';
import { s3Uri } from './s3-uri';
import type { ListedFile } from './storage';
import { JsonLimitError, parseBoundedJson } from './bounded-json';

/**
 * Where an S3 Inventory report lies: its destination bucket and either one `manifest.json` key or
 * the report's folder (`<destination prefix>/<source bucket>/<config id>/`), whose newest
 * `<YYYY-MM-DDTHH-MMZ>/manifest.json` is read.
 */
export interface S3InventoryLocation {
  readonly bucket: string;
  /** A `…/manifest.json` key, or the folder that holds the dated manifests. */
  readonly key: string;
}

/** The fields of an inventory `manifest.json` the source reads (S3 User Guide, "Inventory manifest"). */
interface InventoryManifest {
  readonly sourceBucket: string;
  readonly fileFormat: string;
  readonly fileSchema: string;
  readonly files: ReadonlyArray<{ readonly key: string; readonly size?: number; readonly MD5checksum?: string }>;
}

/** An inventory this engine cannot read, or one that does not describe the source. */
export class InventoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InventoryError';
  }
}

const MANIFEST_NAME = 'manifest.json';
/** The dated folders S3 writes manifests into sort by time as text. */
const DATED_MANIFEST = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}Z\/manifest\.json$/;

/**
 * The objects under `bucket`/`prefix` as an S3 Inventory report lists them: for buckets too large to
 * list with ListObjectsV2 in one Lambda (10,000 sequential pages for ten million objects), S3
 * writes the list itself, daily or weekly. CSV reports only (ORC and Parquet need readers this
 * bundle does not carry). Only current versions count; delete markers and folder markers are
 * skipped. Objects written after the report are not packed; objects deleted since fail to read
 * and are listed as failures, so the totals still hold.
 */
export async function* listFromInventory(client: S3Client, location: S3InventoryLocation, bucket: string, prefix: string,
  retry?: S3RetryOptions): AsyncGenerator<ListedFile[]> {
  const manifestKey = await findManifest(client, location, retry);
  const manifestUri = s3Uri(location.bucket, manifestKey);
  const manifest = parseManifest(await getObjectBytes(client, location.bucket, manifestKey, retry), manifestUri);
  if (manifest.sourceBucket !== bucket) {
    throw new InventoryError(`${manifestUri} lists bucket '${manifest.sourceBucket}', not the source bucket '${bucket}'`);
  }
  const columns = inventoryColumns(manifest.fileSchema, manifestUri);
  for (const file of manifest.files) {
    const uri = s3Uri(location.bucket, file.key);
    // Read whole before its rows count: a retried read must not list a row twice.
    const rows = await withS3Retry(uri, async () => {
      const response = await client.send(new GetObjectCommand({ Bucket: location.bucket, Key: file.key }));
      const listed: ListedFile[] = [];
      await readInventoryFile(response.Body as Readable, uri, file.MD5checksum, (row, line) => {
        const found = listedFile(row, columns, bucket, prefix, `${uri} line ${line}`);
        if (found) listed.push(found);
      });
      return listed;
    }, retry).catch((error: unknown) => {
      // What is wrong with the report itself is said once, not wrapped in a storage error.
      throw error instanceof S3StorageError && error.cause instanceof InventoryError ? error.cause : error;
    });
    yield rows;
  }
}

/**
 * Streams one gzipped CSV file (quoted fields, RFC 4180) to `onRow`, checking its MD5 against the
 * manifest's: inventory files reach hundreds of MB unpacked, so they are never held whole.
 */
async function readInventoryFile(body: Readable, uri: string, md5: string | undefined, onRow: (row: string[], line: number) => void): Promise<void> {
  const hash = createHash('md5');
  body.on('data', (chunk: Buffer) => hash.update(chunk));
  const parser = parse({ relax_column_count: true });
  // pipeline, not pipe: a failure anywhere (a reset, bytes that are not gzip) ends the rows with it.
  const piped = pipeline(body, createGunzip(), parser);
  piped.catch(() => undefined);
  let line = 0;
  try {
    for await (const row of parser) onRow(row as string[], ++line);
    await piped;
  } catch (error) {
    if (error instanceof InventoryError || !isFormatProblem(error)) throw error;
    throw new InventoryError(`${uri}: not a gzipped CSV inventory file: ${(error as Error).message}`);
  }
  if (md5 && hash.digest('hex') !== md5) {
    throw new InventoryError(`${uri}: MD5 differs from the manifest's ${md5}: the file is damaged or was replaced`);
  }
}

/** zlib and csv-parse errors say the bytes are wrong; anything else (a reset) is worth a retry. */
function isFormatProblem(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code ?? '';
  return code.startsWith('Z_') || code.startsWith('CSV_') || code === 'ERR_INVALID_ARG_TYPE';
}

/** The manifest key itself, or the newest dated manifest under the folder. */
async function findManifest(client: S3Client, location: S3InventoryLocation, retry: S3RetryOptions | undefined): Promise<string> {
  if (location.key.endsWith(`/${MANIFEST_NAME}`) || location.key === MANIFEST_NAME) return location.key;
  const folder = location.key === '' || location.key.endsWith('/') ? location.key : `${location.key}/`;
  let newest: string | undefined;
  for await (const page of listPages(client, location.bucket, folder, 1000, retry)) {
    for (const object of page.Contents ?? []) {
      const relative = object.Key?.slice(folder.length) ?? '';
      if (DATED_MANIFEST.test(relative) && (newest === undefined || relative > newest)) newest = relative;
    }
  }
  if (newest === undefined) {
    throw new InventoryError(`no inventory report under ${s3Uri(location.bucket, folder)}: expected <YYYY-MM-DDTHH-MMZ>/${MANIFEST_NAME} ` +
      'there (the folder S3 Inventory writes: <destination prefix>/<source bucket>/<configuration id>/)');
  }
  return folder + newest;
}

function parseManifest(bytes: Buffer, uri: string): InventoryManifest {
  let value: unknown;
  try {
    value = parseBoundedJson(uri, bytes);
  } catch (error) {
    throw new InventoryError(error instanceof JsonLimitError ? error.message : `${uri} is not JSON: ${(error as Error).message}`);
  }
  const manifest = value as Partial<InventoryManifest> | null;
  if (!manifest || typeof manifest.sourceBucket !== 'string' || typeof manifest.fileSchema !== 'string' || !Array.isArray(manifest.files)
    || manifest.files.some((file) => typeof file?.key !== 'string')) {
    throw new InventoryError(`${uri} is not an S3 Inventory manifest: it needs sourceBucket, fileFormat, fileSchema and files[].key`);
  }
  if (manifest.fileFormat !== 'CSV') {
    throw new InventoryError(`${uri}: inventory format '${String(manifest.fileFormat)}' cannot be read; configure the inventory with the CSV format`);
  }
  return manifest as InventoryManifest;
}

/** Positions of the columns the listing needs. */
interface InventoryColumns {
  readonly count: number;
  readonly bucket: number;
  readonly key: number;
  readonly size: number;
  readonly modified: number;
  /** -1 when the report has no such column (unversioned inventories). */
  readonly isLatest: number;
  readonly isDeleteMarker: number;
}

function inventoryColumns(schema: string, uri: string): InventoryColumns {
  const names = schema.split(',').map((name) => name.trim());
  const missing = ['Bucket', 'Key', 'Size', 'LastModifiedDate'].filter((name) => !names.includes(name));
  if (missing.length > 0) {
    throw new InventoryError(`${uri}: the inventory lacks the field(s) ${missing.join(', ')} (fileSchema '${schema}'); ` +
      'add Size and LastModifiedDate to the inventory configuration\'s optional fields');
  }
  return {
    count: names.length,
    bucket: names.indexOf('Bucket'),
    key: names.indexOf('Key'),
    size: names.indexOf('Size'),
    modified: names.indexOf('LastModifiedDate'),
    isLatest: names.indexOf('IsLatest'),
    isDeleteMarker: names.indexOf('IsDeleteMarker'),
  };
}

/** The listed file of one row, or undefined for rows outside the source or not a current object. */
function listedFile(row: string[], columns: InventoryColumns, bucket: string, prefix: string, where: string): ListedFile | undefined {
  if (row.length !== columns.count) {
    throw new InventoryError(`${where}: ${row.length} fields, the fileSchema names ${columns.count}`);
  }
  if (row[columns.bucket] !== bucket) return undefined;
  if (columns.isLatest >= 0 && row[columns.isLatest] !== 'true') return undefined;
  if (columns.isDeleteMarker >= 0 && row[columns.isDeleteMarker] === 'true') return undefined;
  const key = decodeInventoryKey(row[columns.key], where);
  if (!key.startsWith(prefix) || key.endsWith('/')) return undefined;
  const size = Number(row[columns.size]);
  const modified = Date.parse(row[columns.modified]);
  if (!Number.isSafeInteger(size) || size < 0 || Number.isNaN(modified)) {
    throw new InventoryError(`${where}: size '${row[columns.size]}' or last modified date '${row[columns.modified]}' of '${key}' cannot be read`);
  }
  return { key: key.slice(prefix.length), size, modified };
}

/**
 * CSV inventories URL-encode keys, with `+` for a space (form encoding: a `+` in a key is `%2B`),
 * as S3 Batch Operations reads them too.
 */
export function decodeInventoryKey(encoded: string, where: string): string {
  try {
    return decodeURIComponent(encoded.replace(/\+/g, ' '));
  } catch {
    throw new InventoryError(`${where}: key '${encoded}' is not URL-encoded as S3 Inventory writes keys`);
  }
}
