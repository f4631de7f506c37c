import { readFileSync } from 'fs';
import * as path from 'path';

/** Real files written by TensorFlow and dmlc-core (sources and licenses: test/fixtures/README.md). */
export const EXTERNAL_TESTDATA = path.resolve(__dirname, '..', '..', 'fixtures', 'formats');

export function readExternal(name: string): Buffer {
  return readFileSync(path.join(EXTERNAL_TESTDATA, name));
}

/** mulberry32: a tiny seeded PRNG, so "random" cases are the same on every run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomBytes(random: () => number, length: number): Buffer {
  const bytes = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) bytes[i] = Math.floor(random() * 256);
  return bytes;
}

export function hex(text: string): Buffer {
  return Buffer.from(text.replace(/\s+/g, ''), 'hex');
}

// Jest compares Buffers element by element through its generic iterable equality, which takes
// seconds for a few MB; Buffer.equals is a memcmp. Registered here because every test file imports
// this module. The cast: jest 29.7 has `addEqualityTesters`, @types/jest 29.5 does not declare it.
type EqualityTester = (a: unknown, b: unknown) => boolean | undefined;
(expect as unknown as { addEqualityTesters(testers: EqualityTester[]): void }).addEqualityTesters([
  (a, b) => (Buffer.isBuffer(a) && Buffer.isBuffer(b) ? a.equals(b) : undefined),
]);
