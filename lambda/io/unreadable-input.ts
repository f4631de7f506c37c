import { isS3AccessDenied, isS3NotFound } from './s3-retry';

/** The code of {@link NotRegularFileError}. */
const NOT_REGULAR_FILE = 'ERR_NOT_REGULAR_FILE';
/** The code of {@link LinkOutsideSourceError}. */
const LINK_OUTSIDE_SOURCE = 'ERR_LINK_OUTSIDE_SOURCE';
/** The code of {@link UndecodableNameError}. */
const UNDECODABLE_NAME = 'ERR_UNDECODABLE_NAME';

/**
 * Local errors that say the file is not there (a dangling or looping link included), may not be
 * read, or is no regular file (a FIFO, socket or device in the source: it has no contents to pack).
 */
const UNREADABLE_CODES = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'EACCES', 'EPERM', NOT_REGULAR_FILE, LINK_OUTSIDE_SOURCE, UNDECODABLE_NAME]);

/** A source entry that is not a regular file: listed, so that it is reported among the failures, and never read. */
export class NotRegularFileError extends Error {
  public readonly code = NOT_REGULAR_FILE;

  /** `kind`: what it is instead, e.g. `a FIFO`. */
  constructor(kind: string) {
    super(`not a regular file (${kind}): only regular files are packed`);
    this.name = 'NotRegularFileError';
  }
}

/**
 * A symbolic link in a source folder that leads out of it (`cat/x.jpg -> /etc/passwd`): listed among
 * the failures and never read, unless the run follows links (training-io pack --follow-symlinks).
 */
export class LinkOutsideSourceError extends Error {
  public readonly code = LINK_OUTSIDE_SOURCE;

  constructor(target: string, sourceRoot: string) {
    super(`a symbolic link to ${target}, outside the source ${sourceRoot}: not packed (training-io pack --follow-symlinks packs what links lead to)`);
    this.name = 'LinkOutsideSourceError';
  }
}

/**
 * A source entry whose name is not UTF-8 (written in Latin-1, say): a key is text, so it is listed
 * under its name with the other bytes escaped (`caf\xe9.jpg`) and is a listed failure, never read;
 * a folder of such a name is one failure, its files unlisted. The rest of the source is packed.
 */
export class UndecodableNameError extends Error {
  public readonly code = UNDECODABLE_NAME;

  /** `folder`: whether the entry is a folder (its files are then not packed either). */
  constructor(folder: boolean) {
    super(`its name is not UTF-8 (the bytes that are not are shown as \\xNN): not packed${folder ? ', nor any file in this folder' : ''}; `
      + 'rename it in UTF-8 to pack it');
    this.name = 'UndecodableNameError';
  }
}

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
