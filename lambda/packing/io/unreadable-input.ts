import { isS3AccessDenied, isS3NotFound } from './s3-retry';

/** Local errors that say the file is not there (a dangling or looping link included) or may not be read. */
const UNREADABLE_CODES = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'EACCES', 'EPERM']);

/**
 * Whether a source's read failed because the input does not exist or may not be read: the only
 * reads that make an input a listed failure. Anything else (a connection refused or reset, a
 * timeout, 5xx, throttling, EIO) says nothing about the input, only that the store could not be
 * reached: the shard and the run fail instead, so that no file is recorded as lost while it is there.
 * By code, not by class: the error may come from another realm (a worker thread, a test's vm context).
 */
export function isUnreadableInput(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && UNREADABLE_CODES.has(code)) return true;
  return isS3NotFound(error) || isS3AccessDenied(error);
}
