import type { Sharp, SharpOptions } from 'sharp';

/**
 * The part of sharp's CommonJS export the packer uses (its declared types describe the ES module,
 * whose shape differs).
 */
export interface SharpModule {
  (input: Buffer, options?: SharpOptions): Sharp;
  concurrency(threads?: number): number;
  cache(enabled?: boolean): unknown;
  readonly versions: { readonly sharp: string; readonly vips: string };
}

/** Preprocessing was asked for but sharp (an optional dependency) is not installed. */
export class SharpMissingError extends Error {
  constructor(cause: unknown) {
    super('image preprocessing needs the optional dependency sharp, which could not be loaded '
      + `(${(cause as Error).message?.split('\n')[0] ?? String(cause)}); install it with \`npm install sharp\` `
      + '(it ships prebuilt libvips for linux-x64/arm64, macOS and Windows)', { cause });
    this.name = 'SharpMissingError';
  }
}

let loaded: SharpModule | undefined;

/**
 * sharp, loaded on first use: packing without preprocessing never needs it, and it is an optional
 * dependency. Set up once per thread for packing many images on threads of their own: libvips
 * works on one image with one thread (`concurrency(1)`; the packer already runs a worker thread
 * per core, and more threads per image only oversubscribe the cores) and keeps no cache of
 * decoded images (`cache(false)`; every file is read once, so a cache only holds memory).
 */
export function loadSharp(): SharpModule {
  if (loaded) return loaded;
  let sharp: SharpModule;
  try {
    // A plain require: bundlers and ts-node leave it alone, and it runs only when preprocessing is asked for.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    sharp = require('sharp') as SharpModule;
  } catch (error) {
    throw new SharpMissingError(error);
  }
  sharp.concurrency(1);
  sharp.cache(false);
  loaded = sharp;
  return sharp;
}
