import type { ImageFormat } from './image-format';
import { sniffImageFormat } from './image-format';
import { checkJpeg } from './jpeg-check';
import { checkPng } from './png-check';
import { UndecodableImageError } from './undecodable-image';

/** What the check learnt of an image whose whole file it read. */
export interface CheckedImage {
  readonly format: ImageFormat;
  /** Undefined for formats the check leaves to the decoder (WebP, GIF, TIFF: only with preprocessing). */
  readonly width?: number;
  readonly height?: number;
  /** Bytes of DCT coefficients libjpeg holds at once for a progressive JPEG, 0 otherwise. */
  readonly coefficientBytes: number;
}

/** What is accepted. */
export interface ImageCheckRules {
  /** Formats taken: JPEG and PNG are parsed to their end; others are left to the decoder that reads them. */
  readonly formats: ReadonlySet<ImageFormat>;
  /** Pixels (width x height) an image may have. */
  readonly maxPixels: number;
  /** Why a format outside `formats` is not taken, added to the reason (e.g. which flag would take it). */
  readonly formatsHint: string;
  /**
   * Whether 4-component (CMYK, YCCK) JPEGs are taken: torchvision's decode_image (0.14, the
   * training image's) cannot convert them to RGB ("Unsupported color conversion request"); sharp can.
   */
  readonly cmykJpeg: boolean;
}

/**
 * Without preprocessing, the record is the file: what the training readers decode from a record
 * (torchvision.io.decode_image, Pillow and nvJPEG, container/shardio/torch/images.py): JPEG and PNG, 8-bit
 * JPEGs of 1 or 3 components, up to Pillow's decompression-bomb limit (Image.MAX_IMAGE_PIXELS x 2,
 * over which Pillow raises DecompressionBombError).
 */
export const READER_RULES: ImageCheckRules = {
  formats: new Set(['jpeg', 'png']),
  maxPixels: 2 * 89_478_485,
  formatsHint: '; preprocessing (--resize, --max-side) re-encodes webp, tiff, gif and CMYK JPEGs as JPEG',
  cmykJpeg: false,
};

/**
 * With preprocessing, sharp decodes the file and writes the record: the formats taken (anything
 * else sharp reads, such as SVG, HEIF, PDF or raw pixels, is refused), up to sharp's default
 * `limitInputPixels` (16383 x 16383), checked here so that the reason does not depend on libvips.
 */
export const PREPROCESSING_RULES: ImageCheckRules = {
  formats: new Set(['jpeg', 'png', 'webp', 'tiff', 'gif']),
  maxPixels: 0x3fff * 0x3fff,
  formatsHint: '',
  cmykJpeg: true,
};

/** The check for records holding the files' bytes or, with `preprocessed`, the preprocessor's JPEGs. */
export function imageCheckRules(preprocessed: boolean): ImageCheckRules {
  return preprocessed ? PREPROCESSING_RULES : READER_RULES;
}

/**
 * Checks that a file is an image the readers (or the preprocessor) can decode, and reads its size
 * from its header: the format from its bytes, then the whole of a JPEG or PNG parsed to its end.
 * An UndecodableImageError says why not.
 */
export function checkImage(data: Buffer, rules: ImageCheckRules): CheckedImage {
  if (data.length === 0) throw new UndecodableImageError('not an image (0 bytes)');
  const format = sniffImageFormat(data);
  if (format === undefined) throw new UndecodableImageError('not an image (no image format recognised in its bytes)');
  if (!rules.formats.has(format)) {
    throw new UndecodableImageError(`unsupported image format '${format}' (accepted: ${[...rules.formats].join(', ')}${rules.formatsHint})`);
  }
  if (format === 'jpeg') {
    const facts = checkJpeg(data, rules.maxPixels);
    if (facts.components === 4 && !rules.cmykJpeg) {
      throw new UndecodableImageError(`unsupported image format 'jpeg' (CMYK: the training readers cannot convert it to RGB${rules.formatsHint})`);
    }
    return { format, width: facts.width, height: facts.height, coefficientBytes: facts.coefficientBytes };
  }
  if (format === 'png') return { format, ...checkPng(data, rules.maxPixels), coefficientBytes: 0 };
  return { format, coefficientBytes: 0 };
}

/** Why `data` is no image `rules` take, or undefined when it is one. */
export function imageCheckFailure(data: Buffer, rules: ImageCheckRules): string | undefined {
  try {
    checkImage(data, rules);
    return undefined;
  } catch (error) {
    if (error instanceof UndecodableImageError) return error.message;
    throw error;
  }
}
