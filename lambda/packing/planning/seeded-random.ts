const TWO_TO_32 = 4294967296;
const MASK_64 = (1n << 64n) - 1n;
const MASK_32 = (1n << 32n) - 1n;

/**
 * A deterministic pseudo-random generator: xoshiro128** (Blackman & Vigna, 2018), its state set
 * from an integer seed in 0..Number.MAX_SAFE_INTEGER by two outputs of splitmix64, as its authors
 * recommend.
 *
 * Why xoshiro128**: 128 bits of state (period 2^128 - 1, passes BigCrush) and 32-bit outputs from
 * `Math.imul` and shifts, so drawing is fast in JavaScript without BigInt (10 million draws for a
 * shuffle). mulberry32 has only 2^32 states, so distinct 53-bit seeds would collide, and it does
 * not reach every output; splitmix64 or xoshiro256 on every draw would need 64-bit arithmetic
 * (BigInt or split words). splitmix64 is used only for seeding, once: its first output is a
 * bijection of the seed, so distinct seeds give distinct states, never the all-zero one.
 *
 * @see https://prng.di.unimi.it/xoshiro128starstar.c
 * @see https://prng.di.unimi.it/splitmix64.c
 */
export class SeededRandom {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** @param seed an integer in 0..Number.MAX_SAFE_INTEGER (checked by the caller). */
  constructor(seed: number) {
    const splitmix = new SplitMix64(BigInt(seed));
    const first = splitmix.next();
    const second = splitmix.next();
    this.s0 = Number(first & MASK_32);
    this.s1 = Number(first >> 32n);
    this.s2 = Number(second & MASK_32);
    this.s3 = Number(second >> 32n);
  }

  /** The next output, uniform in 0..2^32 - 1. */
  nextUint32(): number {
    const result = Math.imul(rotateLeft(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotateLeft(this.s3, 11);
    return result;
  }

  /**
   * Uniform in 0..bound - 1, without modulo bias: outputs from the incomplete last block of
   * `bound` values are rejected and drawn again.
   * @param bound an integer in 1..2^32
   */
  nextBelow(bound: number): number {
    const accepted = TWO_TO_32 - (TWO_TO_32 % bound);
    let value = this.nextUint32();
    while (value >= accepted) {
      value = this.nextUint32();
    }
    return value % bound;
  }

  /** Fisher–Yates (Durstenfeld) shuffle in place: every permutation equally likely. */
  shuffle(values: Uint32Array): void {
    for (let i = values.length - 1; i > 0; i--) {
      const j = this.nextBelow(i + 1);
      const swapped = values[i];
      values[i] = values[j];
      values[j] = swapped;
    }
  }
}

function rotateLeft(x: number, bits: number): number {
  return (x << bits) | (x >>> (32 - bits));
}

/** splitmix64 (Steele, Lea & Flood, 2014), in BigInt: used only to seed. */
class SplitMix64 {
  constructor(private state: bigint) {}

  next(): bigint {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK_64;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK_64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK_64;
    return z ^ (z >> 31n);
  }
}
