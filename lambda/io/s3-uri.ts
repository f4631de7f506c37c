// S3 addresses as text, without the AWS SDK: the CLI parses s3:// arguments before it knows it needs S3.

/** `raw` and `raw/` both mean the folder `raw/`; `''` and `/` mean the whole bucket. */
export function normalizePrefix(prefix: string | undefined): string {
  const trimmed = (prefix ?? '').replace(/^\/+/, '');
  return trimmed === '' || trimmed.endsWith('/') ? trimmed : `${trimmed}/`;
}

/** `s3://bucket/key`. */
export function s3Uri(bucket: string, key: string): string {
  return `s3://${bucket}/${key}`;
}
