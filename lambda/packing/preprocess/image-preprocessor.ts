import type { Metadata, ResizeOptions, SharpOptions } from 'sharp';
import type { ImagePreprocessing, ManifestPreprocessing } from './image-preprocessing';
import type { SharpModule } from './load-sharp';
import { loadSharp } from './load-sharp';
import { checkImagePreprocessing, manifestPreprocessing } from './preprocessing-settings';
import { checkImage, PREPROCESSING_RULES } from '../image-check/image-check';
import { MAX_DIMENSION as JPEG_MAX_SIDE } from '../image-check/jpeg-check';
import { UndecodableImageError } from '../image-check/undecodable-image';

export { UndecodableImageError };

const { formats: ACCEPTED_FORMATS, maxPixels: PIXEL_LIMIT } = PREPROCESSING_RULES;

/**
 * How every input is opened: the first page or frame only (an animated GIF gives its first frame,
 * a multi-page TIFF its first page), and a truncated file is an error rather than a partly grey
 * picture (libjpeg's recoverable warnings, such as extraneous bytes, are not).
 */
const INPUT: SharpOptions = { failOn: 'truncated', pages: 1 };

/**
 * DCT coefficients one progressive JPEG may need at once (libjpeg keeps every coefficient of a
 * progressive image, 2 bytes each, whatever the shrink-on-load): 192 MiB, a 4:2:0 image of about
 * 67 MP or a 4:4:4 one of 33 MP. Larger ones are refused, which bounds the memory of the images in
 * flight (a 16000 x 16000 one took 860 MB); baseline JPEGs are decoded a few rows at a time.
 */
export const PROGRESSIVE_COEFFICIENT_BUDGET = 192 * 1024 * 1024;


/** Transparent pixels become white: what a viewer shows, and not the arbitrary colour they hide. */
const ALPHA_BACKGROUND = '#ffffff';

/** The `image/format` of a re-encoded record. */
export const PREPROCESSED_FORMAT = 'jpeg';

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
    // First the whole file, cheaply: a JPEG cut short (even with FF D9 appended) or a header bomb never reaches libjpeg.
    const checked = checkImage(data, PREPROCESSING_RULES);
    if (checked.coefficientBytes > PROGRESSIVE_COEFFICIENT_BUDGET) {
      throw new UndecodableImageError(`image too large: a progressive JPEG of ${checked.width} x ${checked.height} px, whose decoding holds `
        + `${mib(checked.coefficientBytes)} MiB of coefficients, over the ${mib(PROGRESSIVE_COEFFICIENT_BUDGET)} MiB allowed an image; save it as baseline JPEG`);
    }
    // The pixel limit is checked here, with its own reason: sharp's metadata() would refuse such an image as unreadable.
    const metadata = await this.decode(() => this.sharp(data, { ...INPUT, limitInputPixels: false }).metadata(), (message) => unreadableHeader(message));
    if (!(ACCEPTED_FORMATS as ReadonlySet<string>).has(metadata.format)) {
      throw new UndecodableImageError(`unsupported image format '${metadata.format}' (accepted: ${[...ACCEPTED_FORMATS].join(', ')})`);
    }
    if (metadata.width * metadata.height > PIXEL_LIMIT) {
      throw new UndecodableImageError(`image too large: ${metadata.width} x ${metadata.height} px, over sharp's limit of ${PIXEL_LIMIT} px`);
    }
    let pipeline = this.sharp(data, INPUT).rotate();
    const resize = this.resizeOf(metadata);
    checkOutputSize(metadata, resize);
    if (resize) pipeline = pipeline.resize(resize);
    if (metadata.hasAlpha) pipeline = pipeline.flatten({ background: ALPHA_BACKGROUND });
    const gray = this.settings.keepGrayscale === true && (metadata.space === 'b-w' || metadata.space === 'grey16');
    pipeline = pipeline.toColourspace(gray ? 'b-w' : 'srgb').jpeg({ quality: this.record.jpegQuality });
    return this.decode(() => pipeline.toBuffer(), () => undecodablePixels(metadata.format, data));
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

  /**
   * Runs a sharp step; an error that comes from the file's bytes becomes an UndecodableImageError
   * whose reason is made from the bytes, not from libvips' message: libvips keeps one error buffer
   * for the process, which another thread's image may clear or fill meanwhile (seen: a truncated
   * JPEG reported as "Unknown error" with images decoded beside it), and the manifest must be the
   * same however many threads packed it.
   */
  private async decode<T>(step: () => Promise<T>, reason: (message: string) => string): Promise<T> {
    try {
      return await step();
    } catch (error) {
      const message = (error as Error).message ?? String(error);
      // Memory is the machine's state, not the file's: that fails the shard, as a read error would.
      if (/out of memory/i.test(message)) throw error;
      throw new UndecodableImageError(reason(message), error);
    }
  }
}

/**
 * The output's sides must fit a JPEG: a 100000 x 300 PNG resized to a shorter side of 256 would be
 * 85333 px wide, which libjpeg refuses to write (with a message that blamed the input).
 */
function checkOutputSize(metadata: Metadata, resize: ResizeOptions | undefined): void {
  const swapped = (metadata.orientation ?? 1) >= 5;
  let width = swapped ? metadata.height : metadata.width;
  let height = swapped ? metadata.width : metadata.height;
  if (resize?.width !== undefined) [width, height] = [resize.width, Math.round((height * resize.width) / width)];
  else if (resize?.height !== undefined) [width, height] = [Math.round((width * resize.height) / height), resize.height];
  if (width > JPEG_MAX_SIDE || height > JPEG_MAX_SIDE) {
    throw new UndecodableImageError(`output too large for JPEG: ${metadata.width} x ${metadata.height} px would be stored at ${width} x ${height} px, `
      + `over libjpeg's ${JPEG_MAX_SIDE.toLocaleString('en-US')} px a side; cap the longer side (--max-side, or longerSide) to store it`);
  }
}

function mib(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}

/** sharp's own words (not libvips'), which say the bytes are no image format it knows. */
function unreadableHeader(message: string): string {
  return /unsupported image format|Input Buffer is empty/i.test(message)
    ? 'not an image (no image format recognised in its bytes)'
    : 'corrupt image (its header does not read)';
}

/** Truncated when the format's end marker is missing, else corrupt. */
function undecodablePixels(format: string, data: Buffer): string {
  return endsComplete(format, data) === false
    ? `truncated ${format} image (it ends before its end marker)`
    : `corrupt ${format} image (its header reads, its pixels do not decode)`;
}

/**
 * Whether the file ends with its format's end marker: JPEG's EOI (in the last KiB: some writers
 * append a few bytes), PNG's IEND chunk, GIF's trailer, the RIFF length of WebP; undefined for TIFF,
 * which has none.
 */
function endsComplete(format: string, data: Buffer): boolean | undefined {
  const tail = data.subarray(Math.max(0, data.length - 1024));
  switch (format) {
    case 'jpeg': return tail.includes(JPEG_END);
    case 'png': return tail.includes(PNG_END);
    case 'gif': return data[data.length - 1] === 0x3b;
    case 'webp': return data.length >= 8 && data.readUInt32LE(4) + 8 <= data.length;
    default: return undefined;
  }
}

const JPEG_END = Buffer.from([0xff, 0xd9]);
const PNG_END = Buffer.from('IEND');
