import type { Metadata, ResizeOptions, SharpOptions } from 'sharp';
import type { ImagePreprocessing, ManifestPreprocessing } from './image-preprocessing';
import type { SharpModule } from './load-sharp';
import { loadSharp } from './load-sharp';
import { checkImagePreprocessing, manifestPreprocessing } from './preprocessing-settings';

/** The input formats taken; anything else sharp reads (SVG, HEIF, PDF, raw pixels) is a listed failure. */
const ACCEPTED_FORMATS: ReadonlySet<string> = new Set(['jpeg', 'png', 'webp', 'tiff', 'gif']);

/**
 * How every input is opened: the first page or frame only (an animated GIF gives its first frame,
 * a multi-page TIFF its first page), and a truncated file is an error rather than a partly grey
 * picture (libjpeg's recoverable warnings, such as extraneous bytes, are not).
 */
const INPUT: SharpOptions = { failOn: 'truncated', pages: 1 };

/** Transparent pixels become white: what a viewer shows, and not the arbitrary colour they hide. */
const ALPHA_BACKGROUND = '#ffffff';

/** The `image/format` of a re-encoded record. */
export const PREPROCESSED_FORMAT = 'jpeg';

/** A file the preprocessor cannot turn into an image: deterministic for its bytes, so listed as a failure, never retried. */
export class UndecodableImageError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'UndecodableImageError';
  }
}

/**
 * Turns image files into the JPEGs the records carry (issue 26), with sharp (libvips): the EXIF
 * orientation applied, resized once (never up), CMYK, palette, 16-bit and alpha (flattened on white)
 * inputs converted to 8-bit sRGB (grayscale stays one channel with `keepGrayscale`), re-encoded at
 * the set quality. JPEG and WebP inputs are shrunk while they are decoded, so a large file never
 * becomes a full-size bitmap. The same bytes, settings, sharp version and CPU architecture give the
 * same output bytes.
 */
export class ImagePreprocessor {
  /** What the manifest records. */
  public readonly record: ManifestPreprocessing;
  private readonly sharp: SharpModule;

  /** Loads sharp (a SharpMissingError when it is not installed) and checks the settings. */
  constructor(private readonly settings: ImagePreprocessing) {
    checkImagePreprocessing(settings);
    this.sharp = loadSharp();
    this.record = manifestPreprocessing(settings, { sharp: this.sharp.versions.sharp, vips: this.sharp.versions.vips });
  }

  /** The record's JPEG bytes for one file; an UndecodableImageError says why a file cannot be one. */
  public async process(data: Buffer): Promise<Buffer> {
    const metadata = await this.decode(() => this.sharp(data, INPUT).metadata());
    if (!ACCEPTED_FORMATS.has(metadata.format)) {
      throw new UndecodableImageError(`unsupported image format '${metadata.format}' (accepted: ${[...ACCEPTED_FORMATS].join(', ')})`);
    }
    let pipeline = this.sharp(data, INPUT).rotate();
    const resize = this.resizeOf(metadata);
    if (resize) pipeline = pipeline.resize(resize);
    if (metadata.hasAlpha) pipeline = pipeline.flatten({ background: ALPHA_BACKGROUND });
    const gray = this.settings.keepGrayscale === true && (metadata.space === 'b-w' || metadata.space === 'grey16');
    pipeline = pipeline.toColourspace(gray ? 'b-w' : 'srgb').jpeg({ quality: this.record.jpegQuality });
    return this.decode(() => pipeline.toBuffer());
  }

  /**
   * The one side to set (sharp derives the other, keeping the aspect ratio), from the displayed
   * size (orientations 5-8 swap the sides): the smaller of the two scales the settings ask for,
   * or none when that would not shrink the image.
   */
  private resizeOf(metadata: Metadata): ResizeOptions | undefined {
    const { shorterSide, longerSide } = this.settings;
    const swapped = (metadata.orientation ?? 1) >= 5;
    const width = swapped ? metadata.height : metadata.width;
    const height = swapped ? metadata.width : metadata.height;
    const shorter = Math.min(width, height);
    const longer = Math.max(width, height);
    const byShorter = shorterSide === undefined ? Infinity : shorterSide / shorter;
    const byLonger = longerSide === undefined ? Infinity : longerSide / longer;
    if (Math.min(byShorter, byLonger) >= 1) return undefined;
    const [side, pixels] = byShorter <= byLonger ? [shorter, shorterSide!] : [longer, longerSide!];
    return side === width ? { width: pixels } : { height: pixels };
  }

  /** Runs a sharp step; an error that comes from the file's bytes becomes an UndecodableImageError with its reason. */
  private async decode<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      const message = (error as Error).message ?? String(error);
      // Memory is the machine's state, not the file's: that fails the shard, as a read error would.
      if (/out of memory/i.test(message)) throw error;
      throw new UndecodableImageError(reasonOf(message), error);
    }
  }
}

function reasonOf(message: string): string {
  const first = message.split('\n')[0].trim();
  if (/unsupported image format|Input Buffer is empty/i.test(first)) return 'not an image (no image format recognised in its bytes)';
  if (/premature end|truncat|unexpected end|Read error/i.test(first)) return `truncated image (${first})`;
  return `image cannot be decoded (${first})`;
}
