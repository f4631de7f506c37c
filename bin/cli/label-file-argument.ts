import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { S3Client } from '@aws-sdk/client-s3';
import { UsageError } from './usage-error';
import type { LabelTable } from '../../lambda/packing/labels/label-table';
import { LabelFileError } from '../../lambda/packing/labels/label-table';
import { quoted } from '../../lambda/io/printable';

/**
 * `--label-file`: a local path, a `file://` URL or an `s3://bucket/key` URI, read and checked whole;
 * what is wrong with it is a usage error (exit 2), said before anything is listed. `client`: the
 * command's S3 client, there whenever the argument is an s3:// URI.
 */
export async function readLabelFileArgument(raw: string, client: S3Client | undefined): Promise<LabelTable> {
  // Loaded here: the S3 SDK and csv-parse only for a run that reads a label file.
  const { parseS3ObjectUri, readLocalLabelTable, readS3LabelTable } = await import('../../lambda/packing/labels/read-label-file');
  try {
    if (/^s3:/i.test(raw)) {
      const object = parseS3ObjectUri(raw);
      if (!object) throw new UsageError(`--label-file ${quoted(raw)} is not an S3 object URI: write it as s3://bucket/key.csv`);
      const { s3RetryOptions } = await import('./s3-storage');
      return await readS3LabelTable(client!, object.bucket, object.key, s3RetryOptions());
    }
    return await readLocalLabelTable(/^file:/i.test(raw) ? fileURLToPath(raw) : path.resolve(raw));
  } catch (error) {
    if (error instanceof LabelFileError) throw new UsageError(error.message);
    throw error;
  }
}
