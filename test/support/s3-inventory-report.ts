import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { S3Client } from '@aws-sdk/client-s3';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { putTestObjects } from './s3-server';

/** The schema S3 writes for an unversioned CSV inventory with the optional fields the planner needs (and one it does not). */
export const INVENTORY_SCHEMA = 'Bucket, Key, Size, LastModifiedDate, StorageClass';

/** A report to write, as S3 Inventory would deliver it. */
export interface InventoryReport {
  /** The report's folder (`<destination prefix>/<source bucket>/<config id>/`). */
  readonly folder: string;
  /** The dated folder of this delivery, e.g. `2026-11-20T00-00Z`. */
  readonly stamp: string;
  /** CSV lines (see {@link csvLine}). */
  readonly lines: string[];
  readonly schema?: string;
  /** Data files the lines are dealt into (default 2). */
  readonly files?: number;
  readonly format?: string;
  /** Bucket the manifest says it lists (default: the bucket written to). */
  readonly sourceBucket?: string;
}

/** One CSV line with every field quoted, as S3 Inventory writes them. */
export function csvLine(fields: string[]): string {
  return `${fields.map((field) => `"${field.replace(/"/g, '""')}"`).join(',')}\n`;
}

/** URL-encodes a key as CSV inventories do: form encoding, a space as `+`. */
export function inventoryKey(key: string): string {
  return encodeURIComponent(key).replace(/%20/g, '+');
}

/** Lines of an unversioned report of every object of `bucket` under `prefix`, as it is now. */
export async function currentInventoryLines(client: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const lines: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of page.Contents ?? []) lines.push(csvLine([bucket, inventoryKey(o.Key!), String(o.Size), o.LastModified!.toISOString(), 'STANDARD']));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return lines;
}

/** Writes gzipped data files under `<folder>data/` and `<folder><stamp>/manifest.json` naming them with their MD5; returns the manifest key. */
export async function writeInventoryReport(client: S3Client, bucket: string, report: InventoryReport): Promise<string> {
  const fileCount = report.files ?? 2;
  const files: Array<{ key: string; size: number; MD5checksum: string }> = [];
  const uploads: Record<string, Buffer> = {};
  for (let f = 0; f < fileCount; f++) {
    const body = gzipSync(Buffer.from(report.lines.filter((_, i) => i % fileCount === f).join('')));
    const key = `${report.folder}data/${report.stamp}-${f}.csv.gz`;
    uploads[key] = body;
    files.push({ key, size: body.length, MD5checksum: createHash('md5').update(body).digest('hex') });
  }
  const manifestKey = `${report.folder}${report.stamp}/manifest.json`;
  uploads[manifestKey] = Buffer.from(JSON.stringify({
    sourceBucket: report.sourceBucket ?? bucket,
    destinationBucket: `arn:aws:s3:::${bucket}`,
    version: '2016-11-30',
    creationTimestamp: '1763600000000',
    fileFormat: report.format ?? 'CSV',
    fileSchema: report.schema ?? INVENTORY_SCHEMA,
    files,
  }));
  await putTestObjects(client, bucket, uploads);
  return manifestKey;
}
