import type { Size } from 'aws-cdk-lib';
import { Stack, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { IMAGE_PREPROCESSING_LIMITS, LAMBDA_MB_PER_VCPU, lambdaVcpus } from '../../contract/image-preprocessing-limits';
import { ValidationError } from '../../private/errors';
import { isResolved, validateWholeNumber } from '../../private/validation';
import type { ImagePreprocessingOptions } from '../../vocabulary/image-preprocessing-options';

/**
 * The packer's memory when it preprocesses and none is given: two vCPUs' worth of CPU time
 * (Lambda gives one per 1,769 MB). Decoding, resizing and re-encoding a 64 MiB shard of ~100 KB
 * JPEGs takes about two CPU-seconds, reading it from S3 about one second: at two vCPUs the CPU
 * keeps up with the network. The price per shard stays about the same, as CPU-bound work that
 * uses every vCPU costs the same GB-seconds at any size; raise `packerMemorySize` (up to 10,240 MB,
 * six vCPUs) to pack faster.
 */
export const PREPROCESSING_PACKER_MEMORY_MIB = 2 * LAMBDA_MB_PER_VCPU;

/** Node's default libuv pool, which the S3 client's DNS lookups share with sharp. */
const NODE_DEFAULT_THREAD_POOL = 4;

/** Checks the options: each error names the prop, the value and what is allowed. Unresolved values are skipped. */
export function validateImagePreprocessing(scope: Construct, options: ImagePreprocessingOptions | undefined): void {
  if (!options) return;
  const { sidePixels, jpegQuality } = IMAGE_PREPROCESSING_LIMITS;
  validateWholeNumber(scope, 'InvalidImageSide', 'imagePreprocessing.shorterSidePixels', options.shorterSidePixels, sidePixels.min, sidePixels.max);
  validateWholeNumber(scope, 'InvalidImageSide', 'imagePreprocessing.longerSidePixels', options.longerSidePixels, sidePixels.min, sidePixels.max);
  validateWholeNumber(scope, 'InvalidJpegQuality', 'imagePreprocessing.jpegQuality', options.jpegQuality, jpegQuality.min, jpegQuality.max);
  const { shorterSidePixels: shorter, longerSidePixels: longer } = options;
  if (isResolved(shorter) && isResolved(longer) && longer < shorter) {
    throw new ValidationError('LongerSideBelowShorterSide',
      `imagePreprocessing.longerSidePixels must be at least shorterSidePixels, got ${longer} < ${shorter}: a cap on the longer side `
      + 'below the shorter side\'s target would shrink the shorter side under it', scope);
  }
}

/**
 * The `IMAGE_PREPROCESSING` variable: JSON of the engine's settings (lambda/packing/preprocess/
 * image-preprocessing.ts), deploy-time values rendered by CloudFormation.
 */
export function imagePreprocessingVariable(scope: Construct, options: ImagePreprocessingOptions): string {
  const settings = {
    shorterSide: options.shorterSidePixels,
    longerSide: options.longerSidePixels,
    jpegQuality: options.jpegQuality,
    keepGrayscale: options.keepGrayscale,
  };
  const defined = Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
  return Stack.of(scope).toJsonString(defined);
}

/**
 * `UV_THREADPOOL_SIZE` of a preprocessing packer: one thread per vCPU, never below Node's default.
 * The packer uses its vCPUs by resizing several images at once, one libvips thread each, rather
 * than one image on several threads: a ~100 KB JPEG takes a few milliseconds and its decoding is
 * sequential, so threads inside one image mostly wait, while images side by side scale with the
 * cores. sharp runs each image on libuv's pool, so the pool bounds how many run at once.
 * Undefined when the memory is known only at deploy time: Node's default then.
 */
export function packerThreadPoolSize(memorySize: Size): number | undefined {
  if (memorySize.isUnresolved()) return undefined;
  const memoryMiB = memorySize.toMebibytes();
  return Token.isUnresolved(memoryMiB) ? undefined : Math.max(NODE_DEFAULT_THREAD_POOL, lambdaVcpus(memoryMiB));
}
