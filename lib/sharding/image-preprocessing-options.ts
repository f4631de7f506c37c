/**
 * What the packers do to each image before it becomes a record: resized and re-encoded once at
 * pack time, so that every epoch of every job decodes fewer pixels. A training loader's CPU time
 * goes mostly to decoding, and a core decodes more of a smaller JPEG a second (the planner's rates
 * by sample size: lib/contract/decoding-rates.ts).
 *
 * Every image is re-encoded as a JPEG (EXIF orientation applied, alpha flattened on white); files
 * sharp cannot decode are listed as failures of the version, not dropped.
 */
export interface ImagePreprocessingOptions {
  /**
   * Resize so that the shorter side is this many pixels (1–16,384), keeping the aspect ratio;
   * smaller images are never enlarged. 256 suits the 224-pixel crops of ImageNet training.
   *
   * @default - the shorter side is not resized
   */
  readonly shorterSidePixels?: number;

  /**
   * Then cap the longer side at this many pixels (1–16,384, at least `shorterSidePixels`),
   * keeping the aspect ratio; smaller images are never enlarged. Bounds panoramas.
   *
   * @default - the longer side is not capped
   */
  readonly longerSidePixels?: number;

  /**
   * JPEG quality of the re-encoded images, 1–100.
   *
   * @default 90
   */
  readonly jpegQuality?: number;

  /**
   * Keep single-channel (grayscale) images as one channel instead of converting them to RGB.
   * Models that expect three channels need the conversion.
   *
   * @default false
   */
  readonly keepGrayscale?: boolean;
}
