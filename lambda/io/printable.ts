/**
 * Names and values from outside (file names, S3 keys, arguments, event fields) as they may appear in
 * a line meant for people. A name can hold anything but `/` and NUL: `ESC ]0;…BEL` would retitle the
 * terminal, `\r` overwrite the line, `\n` fake a line of its own, a bidi override reorder what is
 * read. The one escaping every human-readable line goes through (the CLI's output and errors, the
 * handlers' input errors); the Python readers' is errors.printable.
 */
import { isUtf8 } from 'node:buffer';
import { redactSecrets } from './redact-secrets';

/** Values longer than this many characters are cut when echoed: a 100,000-character argument is no message. */
export const ECHO_LIMIT = 200;

/**
 * C0 and C1 controls, DEL, the line and paragraph separators, bidi embeddings, overrides and
 * isolates, and lone surrogates (which no terminal shows as what they are).
 */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` with every unprintable character escaped (`\n`, `\r`, `\t`, `\x1b`, `\u{202e}`). */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (char) => {
    const code = char.charCodeAt(0);
    return NAMED[char] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`);
  });
}

/**
 * A message as one line for people: the secrets a URL carries redacted, every unprintable character
 * escaped, so that no name it quotes can break the line or fake another.
 */
export function printableMessage(text: string): string {
  return printable(redactSecrets(text));
}

/** `text` cut to `limit` characters, saying how long it was. */
export function truncated(text: string, limit = ECHO_LIMIT): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length} characters)`;
}

/** `'text'`, cut and escaped: how a value from outside is echoed in a message. */
export function quoted(text: string, limit = ECHO_LIMIT): string {
  return `'${printable(truncated(text, limit))}'`;
}

/**
 * The bytes of a name that is not UTF-8, as text: its UTF-8 runs as they are, every other byte as
 * `\xNN` (a folder entry `caf\xe9.jpg` written in Latin-1).
 */
export function escapedBytes(name: Buffer): string {
  let text = '';
  let start = 0;
  for (let i = 0; i < name.length;) {
    const length = [1, 2, 3, 4].find((n) => i + n <= name.length && isUtf8(name.subarray(i, i + n)));
    if (length !== undefined) {
      i += length;
      continue;
    }
    text += `${name.subarray(start, i).toString('utf8')}\\x${name[i].toString(16).padStart(2, '0')}`;
    start = ++i;
  }
  return text + name.subarray(start).toString('utf8');
}

/** The bytes {@link escapedBytes} was given back from its text (every `\\xNN` one byte). */
export function unescapedBytes(text: string): Buffer {
  const parts: Buffer[] = [];
  let last = 0;
  for (const match of text.matchAll(/\\x([0-9a-f]{2})/g)) {
    parts.push(Buffer.from(text.slice(last, match.index), 'utf8'), Buffer.from([parseInt(match[1], 16)]));
    last = match.index + match[0].length;
  }
  parts.push(Buffer.from(text.slice(last), 'utf8'));
  return Buffer.concat(parts);
}
