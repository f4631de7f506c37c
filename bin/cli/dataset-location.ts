import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from './usage-error';
import { isPathInside, resolveExistingPath } from '../../lambda/io/real-path';
import { normalizePrefix, s3Uri } from '../../lambda/io/s3-uri';
import { quoted } from '../../lambda/io/printable';

/** A folder on this machine, or an S3 prefix, as given on the command line. */
export type DatasetLocation =
  | { readonly kind: 'local'; readonly dir: string }
  | { readonly kind: 's3'; readonly bucket: string; readonly prefix: string; readonly uri: string };

/** S3's bucket naming rules: 3–63 lowercase letters, digits, dots and hyphens, a letter or digit at each end. */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * `s3://bucket/prefix/` → an S3 location; a `file://` URL or a path → a local folder (resolved).
 * `argument` names it in errors. Refused: an empty argument (it would resolve to the working
 * folder), URLs of other schemes (`https://…` would become a folder named `https:`) and a URL
 * with a user name or password, before any of it is echoed.
 */
export function parseLocation(argument: string, raw: string): DatasetLocation {
  if (raw.trim() === '') throw new UsageError(`${argument} is empty: give a folder, a file:// URL or an s3://bucket/prefix/ URI`);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw)?.[1].toLowerCase();
  if (scheme !== undefined && hasUserInfo(raw)) {
    // Not a character of it echoed: the part before '@' is a user name and password as often as not.
    throw new UsageError(`${argument} is a ${scheme}:// URL with a user name or password before '@' (not shown): `
      + 'S3 credentials come from the environment (AWS_PROFILE, AWS_ACCESS_KEY_ID, an instance role), never from the location');
  }
  if (scheme === 'file') return { kind: 'local', dir: localPathOf(argument, raw) };
  if (scheme !== undefined && scheme !== 's3') {
    throw new UsageError(`${argument} ${quoted(raw)} is a ${scheme}:// URL: give a folder, a file:// URL or an s3://bucket/prefix/ URI`);
  }
  if (!/^s3:/i.test(raw)) return { kind: 'local', dir: path.resolve(raw) };
  const match = /^s3:\/\/([^/]*)(?:\/(.*))?$/.exec(raw);
  if (!match) throw new UsageError(`${argument} ${quoted(raw)} is not an S3 URI: write it as s3://bucket/prefix/`);
  const [, bucket, key = ''] = match;
  if (!BUCKET_NAME.test(bucket)) {
    throw new UsageError(`${argument} ${quoted(raw)} does not name a valid bucket: got ${quoted(bucket)}, expected 3-63 lowercase letters, digits, dots or hyphens`);
  }
  if (key.split('/').some((segment, i, all) => segment === '' && i < all.length - 1)) {
    throw new UsageError(`${argument} ${quoted(raw)} has an empty path segment ('//'): write it as s3://bucket/prefix/`);
  }
  const prefix = normalizePrefix(key);
  return { kind: 's3', bucket, prefix, uri: s3Uri(bucket, prefix) };
}

/** Whether a URL's authority (between `//` and the next `/`, `?` or `#`) holds `user[:password]@`. */
function hasUserInfo(url: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(url);
}

/** The folder of a `file://` URL (`file:///data/cats/`); one that names another host is refused. */
function localPathOf(argument: string, raw: string): string {
  try {
    return path.resolve(fileURLToPath(raw));
  } catch (error) {
    throw new UsageError(`${argument} ${quoted(raw)} is not a local file:// URL (${(error as Error).message}): write it as file:///absolute/path`);
  }
}

/** How the location is shown to the user. */
export function describeLocation(location: DatasetLocation): string {
  return location.kind === 'local' ? location.dir : location.uri;
}

/** Whether `inner` lies at or under `outer` (same folder tree, or same bucket and a prefix under it). */
export function isInside(inner: DatasetLocation, outer: DatasetLocation): boolean {
  if (inner.kind === 'local' && outer.kind === 'local') return isPathInside(inner.dir, outer.dir);
  if (inner.kind === 's3' && outer.kind === 's3') return inner.bucket === outer.bucket && inner.prefix.startsWith(outer.prefix);
  return false;
}

/** A local location with symbolic links resolved (see resolveExistingPath); an S3 location as it is. */
export function resolveLinks(location: DatasetLocation): DatasetLocation {
  return location.kind === 'local' ? { kind: 'local', dir: resolveExistingPath(location.dir) } : location;
}

/** The command-line settings of the S3 client. */
export interface S3ClientFlags {
  readonly endpointUrl?: string;
  readonly region?: string;
}

/** Checks `--endpoint-url` and `--region` up front, whether or not an S3 location needs them. */
export function checkS3Flags(flags: S3ClientFlags): void {
  if (flags.endpointUrl !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(flags.endpointUrl);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new UsageError(`--endpoint-url must be an http:// or https:// URL, got ${quoted(flags.endpointUrl)}`);
    }
  }
  if (flags.region !== undefined && !/^[a-z0-9-]+$/.test(flags.region)) {
    throw new UsageError(`--region must be a region name such as us-east-1, got ${quoted(flags.region)}`);
  }
}
