import type { ImagePreprocessing, ManifestPreprocessing } from './image-preprocessing';
import { DEFAULT_JPEG_QUALITY, IMAGE_PREPROCESSING_LIMITS } from '../../../lib/contract/image-preprocessing-limits';

const { sidePixels: SIDE_PIXELS, jpegQuality: JPEG_QUALITY } = IMAGE_PREPROCESSING_LIMITS;

/**
 * Checks settings given to the engine (the CLI checks its flags first, with their names): each
 * error names the setting, the value and what is allowed.
 */
export function checkImagePreprocessing(settings: ImagePreprocessing): void {
  checkWhole('preprocessing.shorterSide', settings.shorterSide, SIDE_PIXELS);
  checkWhole('preprocessing.longerSide', settings.longerSide, SIDE_PIXELS);
  checkWhole('preprocessing.jpegQuality', settings.jpegQuality, JPEG_QUALITY);
  if (settings.keepGrayscale !== undefined && typeof settings.keepGrayscale !== 'boolean') {
    throw new RangeError(`preprocessing.keepGrayscale must be true or false, got ${JSON.stringify(settings.keepGrayscale)}`);
  }
}

function checkWhole(name: string, value: number | undefined, range: { readonly min: number; readonly max: number }): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < range.min || value > range.max) {
    throw new RangeError(`${name} must be a whole number between ${range.min} and ${range.max}, got ${JSON.stringify(value)}`);
  }
}

/** What the manifest records for these settings: defaults filled in, and the versions that do the work. */
export function manifestPreprocessing(settings: ImagePreprocessing, versions: { readonly sharp: string; readonly vips: string }): ManifestPreprocessing {
  return {
    shorterSide: settings.shorterSide ?? null,
    longerSide: settings.longerSide ?? null,
    jpegQuality: settings.jpegQuality ?? DEFAULT_JPEG_QUALITY,
    keepGrayscale: settings.keepGrayscale ?? false,
    sharp: versions.sharp,
    libvips: versions.vips,
  };
}

/**
 * Whether records made with `a` and with `b` are the same: every setting and both library
 * versions (the bytes are reproducible only with the same versions). Absent means no preprocessing.
 */
export function samePreprocessing(a: ManifestPreprocessing | undefined, b: ManifestPreprocessing | undefined): boolean {
  return describePreprocessing(a) === describePreprocessing(b);
}

/** `shorter side 256 px, JPEG quality 90 (sharp 0.35.5, libvips 8.18.7)`, or `none` (the files' own bytes). */
export function describePreprocessing(recorded: ManifestPreprocessing | undefined): string {
  if (!recorded) return 'none';
  const parts = [
    ...(recorded.shorterSide !== null ? [`shorter side ${recorded.shorterSide} px`] : []),
    ...(recorded.longerSide !== null ? [`longer side at most ${recorded.longerSide} px`] : []),
    `JPEG quality ${recorded.jpegQuality}`,
    ...(recorded.keepGrayscale ? ['grayscale kept'] : []),
  ];
  return `${parts.join(', ')} (sharp ${recorded.sharp}, libvips ${recorded.libvips})`;
}
