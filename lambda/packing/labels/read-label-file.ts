import * as fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { MAX_LABEL_FILE_BYTES } from '../../../lib/contract/label-file';
import type { S3RetryOptions } from '../../io/s3-retry';
import { S3StorageError, withS3Retry } from '../../io/s3-retry';
import { s3Uri } from '../../io/s3-uri';
import { LabelFileError, labelFileTooLarge, readLabelTable } from './label-table';
import type { LabelTable } from './label-table';

/**
 * A label file on this machine (the CLI's `--label-file PATH`), read only when it is a regular file
 * (a FIFO or a device would be read until memory ran out) of at most MAX_LABEL_FILE_BYTES, its size
 * checked before a byte is read.
 */
export async function readLocalLabelTable(file: string): Promise<LabelTable> {
  const uri = pathToFileURL(file).href;
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw new LabelFileError(`label file ${file} cannot be read: ${(error as Error).message}`);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new LabelFileError(`label file ${file} is not a regular file: give a .csv or .jsonl file`);
    if (stats.size > MAX_LABEL_FILE_BYTES) throw labelFileTooLarge(uri, stats.size);
    return await readLabelTable(uri, handle.createReadStream({ autoClose: false }));
  } finally {
    await handle.close();
  }
}

/**
 * A label file in S3 (the planner's `LABEL_FILE`, the CLI's `--label-file s3://…`), streamed: its
 * size (ContentLength) is checked before the body is read. A reset while reading is retried as a
 * whole (the rows of a partial read count for nothing); a malformed file fails at once.
 */
export function readS3LabelTable(client: S3Client, bucket: string, key: string, retry?: S3RetryOptions): Promise<LabelTable> {
  const uri = s3Uri(bucket, key);
  return withS3Retry(uri, async () => {
    const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    if ((response.ContentLength ?? 0) > MAX_LABEL_FILE_BYTES) {
      (response.Body as Readable | undefined)?.destroy();
      throw labelFileTooLarge(uri, response.ContentLength!);
    }
    return readLabelTable(uri, response.Body as Readable);
  }, retry).catch((error: unknown) => {
    // What is wrong with the file itself is said once, not wrapped in a storage error.
    throw error instanceof S3StorageError && error.cause instanceof LabelFileError ? error.cause : error;
  });
}

/** `s3://bucket/key` → its bucket and key; undefined for anything else. */
export function parseS3ObjectUri(uri: string): { bucket: string; key: string } | undefined {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri);
  return match ? { bucket: match[1], key: match[2] } : undefined;
}
