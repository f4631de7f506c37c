import * as fs from 'node:fs';
import { MAX_JSON_BYTES, MAX_JSON_DEPTH } from '../../lib/contract/json-limits';

/** A JSON document refused before it was parsed: too large, too deep, or not a regular file. */
export class JsonLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonLimitError';
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * Parses JSON that came from outside (`name`: the file or object, for errors) after checking its
 * size and nesting against lib/contract/json-limits.ts: the errors name it and the limit, where a
 * bare parse would spend gigabytes on a huge document or overflow a stack on a deep one.
 */
export function parseBoundedJson(name: string, data: Buffer | string): unknown {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  if (bytes.length > MAX_JSON_BYTES) throw tooLarge(name, bytes.length);
  const depth = jsonDepth(bytes);
  if (depth > MAX_JSON_DEPTH) {
    throw new JsonLimitError(`${name}: JSON nested more than ${MAX_JSON_DEPTH} levels deep; refused (the documents this tool writes nest 4 deep)`);
  }
  return JSON.parse(bytes.toString('utf8'));
}

/**
 * A JSON file read and parsed as {@link parseBoundedJson}, only when it is a regular file: a FIFO
 * or a device (`/dev/zero`) would be read until memory ran out. Its size is checked before a byte is read.
 */
export function readBoundedJsonFile(file: string): unknown {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  try {
    const stats = fs.fstatSync(fd);
    if (!stats.isFile()) throw new JsonLimitError(`${file}: not a regular file; only a file is read as JSON`);
    if (stats.size > MAX_JSON_BYTES) throw tooLarge(file, stats.size);
    return parseBoundedJson(file, fs.readFileSync(fd));
  } finally {
    fs.closeSync(fd);
  }
}

function tooLarge(name: string, size: number): JsonLimitError {
  return new JsonLimitError(`${name}: ${(size / 2 ** 20).toFixed(1)} MiB of JSON is more than the ${MAX_JSON_BYTES / 2 ** 20} MiB allowed; refused without parsing it`);
}

/**
 * The deepest nesting of arrays and objects in a JSON text (brackets inside strings do not count).
 * A string is skipped to its closing quote with indexOf (native, about 3 times a byte loop's speed:
 * the scan then costs about what the parse does).
 */
export function jsonDepth(bytes: Buffer): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      i = closingQuote(bytes, i);
      if (i < 0) break; // an unterminated string: the parse says so
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      deepest = Math.max(deepest, ++depth);
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      depth--;
    }
  }
  return deepest;
}

/** The position of the quote that closes the string opened at `open` (one after an even run of backslashes), or -1. */
function closingQuote(bytes: Buffer, open: number): number {
  for (let quote = bytes.indexOf(QUOTE, open + 1); quote >= 0; quote = bytes.indexOf(QUOTE, quote + 1)) {
    let backslashes = 0;
    while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return -1;
}
