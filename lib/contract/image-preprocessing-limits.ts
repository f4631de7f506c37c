/**
 * The limits of the image preprocessing settings (issue 26; lambda/packing/preprocess/image-preprocessing.ts
 * defines the settings): the construct checks them at synth time, the handlers at run time, the
 * engine when it resizes. JSON keys of the `IMAGE_PREPROCESSING` environment variable are the
 * settings' own field names.
 */
export const IMAGE_PREPROCESSING_LIMITS = {
  /** A resized side, in pixels: libvips' JPEG writer takes up to 65,535; 16,384 is far past any training size. */
  sidePixels: { min: 1, max: 16_384 },
  /** libjpeg's quality scale. */
  jpegQuality: { min: 1, max: 100 },
} as const;

/** JPEG quality of re-encoded images when none is given. */
export const DEFAULT_JPEG_QUALITY = 90;

/** The fields of the settings, as the environment variable's JSON names them. */
export const IMAGE_PREPROCESSING_FIELDS = ['shorterSide', 'longerSide', 'jpegQuality', 'keepGrayscale'] as const;

/**
 * Lambda's CPU share: one vCPU's worth of time per 1,769 MB of memory, up to 6 vCPUs at 10,240 MB
 * (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html). Resizing is CPU-bound,
 * so the packer's memory sets its speed at preprocessing.
 */
export const LAMBDA_MB_PER_VCPU = 1769;

/** Lambda's largest vCPU count (at 10,240 MB). */
export const LAMBDA_MAX_VCPUS = 6;

/** The vCPUs' worth of time a function of `memoryMiB` gets, rounded up to whole threads to run on them. */
export function lambdaVcpus(memoryMiB: number): number {
  return Math.min(LAMBDA_MAX_VCPUS, Math.max(1, Math.ceil(memoryMiB / LAMBDA_MB_PER_VCPU)));
}
