import type { SourceFile } from '../../../lambda/packing/planning/plan-types';

export const KIB = 1024;
export const MIB = 1024 * 1024;

/**
 * A fixed pseudo-random sequence for test data (a 32-bit linear congruential generator,
 * Numerical Recipes constants): independent of the planner's own generator, and the same on
 * every run.
 */
export class TestSequence {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (Math.imul(this.state, 1664525) + 1013904223) >>> 0;
    return this.state / 4294967296;
  }

  /** An integer in min..max inclusive. */
  integer(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
}

/** `count` files `class-<c>/file-<i>.jpg` over `classes` folders, sizes uniform in min..max bytes. */
export function uniformFiles(count: number, minBytes: number, maxBytes: number, options: { seed?: number; classes?: number } = {}): SourceFile[] {
  const sequence = new TestSequence(options.seed ?? 1);
  const classes = options.classes ?? 10;
  const files: SourceFile[] = [];
  for (let i = 0; i < count; i++) {
    files.push({ key: `class-${i % classes}/file-${String(i).padStart(7, '0')}.jpg`, size: sequence.integer(minBytes, maxBytes) });
  }
  return files;
}

/** The same files in another fixed order (a Fisher–Yates pass driven by the test sequence). */
export function reordered<T>(items: readonly T[], seed: number): T[] {
  const sequence = new TestSequence(seed);
  const copy = items.slice();
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(sequence.next() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}
