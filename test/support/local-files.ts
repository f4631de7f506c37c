import { createCipheriv, createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Makes fresh folders under the system's temporary folder and removes them after the tests of the
 * file (or `describe`) that called it.
 */
export function temporaryFolders(): (purpose: string) => string {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
  });
  return (purpose) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `cdk-training-io-${purpose}-`));
    made.push(dir);
    return dir;
  };
}

/** Writes each `/`-separated key under `root`, making its folders. */
export function writeFiles(root: string, files: Readonly<Record<string, Buffer | string>>): void {
  for (const [key, data] of Object.entries(files)) {
    const file = path.join(root, ...key.split('/'));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, data);
  }
}

/** Every file under `root` (hidden ones included), as sorted `/`-separated keys. */
export function listFiles(root: string): string[] {
  const keys: string[] = [];
  const walk = (relative: string): void => {
    for (const entry of fs.readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const key = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(key);
      else keys.push(key);
    }
  };
  walk('');
  return keys.sort();
}

/**
 * `length` pseudo-random bytes, the same for the same seed on every run: AES-CTR over zeros, keyed
 * by the seed. Native, so megabytes of test data cost milliseconds (a per-byte JS generator under
 * jest costs about half a microsecond a byte).
 */
export function seededBytes(seed: string, length: number): Buffer {
  const key = createHash('sha256').update(seed).digest().subarray(0, 16);
  return createCipheriv('aes-128-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(length));
}
