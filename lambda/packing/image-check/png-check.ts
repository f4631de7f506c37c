import * as zlib from 'node:zlib';
import { UndecodableImageError } from './undecodable-image';

/** What the check learnt of a PNG. */
export interface PngFacts {
  readonly width: number;
  readonly height: number;
}

/** Bit depths allowed per colour type (PNG spec, table 11.1). */
const DEPTHS: Record<number, readonly number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
/** Adam7: each pass's first column and row, and steps. */
const ADAM7 = [[0, 0, 8, 8], [4, 0, 8, 8], [0, 4, 4, 8], [2, 0, 4, 4], [0, 2, 2, 4], [1, 0, 2, 2], [0, 1, 1, 2]];
/**
 * Filtered pixel data inflated to check that it is all there; larger images are checked chunk by
 * chunk (lengths, CRCs) only, which bounds the check's memory: such PNGs are rare in training
 * sets, and with --resize sharp refuses one whose data stops early.
 */
const MAX_INFLATED_BYTES = 64 * 1024 * 1024;

/**
 * Checks a whole PNG as Pillow and libpng read it: the signature, every chunk's length and CRC,
 * IHDR first and valid, PLTE for palette images, the IDAT chunks, IEND last; then the image data
 * inflated (zlib, in native code) to exactly the bytes the header declares, so that a file cut at a
 * chunk boundary with IEND appended is refused. No npm library checks this without decoding the
 * pixels (pngjs unfilters every row); chunk walking is a few lines.
 */
export function checkPng(data: Buffer, maxPixels: number): PngFacts {
  let pos = 8;
  let header: { width: number; height: number; depth: number; colour: number; interlaced: boolean } | undefined;
  let palette = false;
  const idat: Buffer[] = [];
  let idatEnded = false;
  for (;;) {
    if (pos + 8 > data.length) throw truncated('it ends before its IEND chunk');
    const length = data.readUInt32BE(pos);
    const type = data.toString('latin1', pos + 4, pos + 8);
    if (length > 0x7fffffff) throw corrupt(`chunk ${JSON.stringify(type)} claims ${length} bytes`);
    if (pos + 12 + length > data.length) throw truncated(`it ends inside chunk ${JSON.stringify(type)}`);
    const body = data.subarray(pos + 8, pos + 8 + length);
    if (zlib.crc32(body, zlib.crc32(data.subarray(pos + 4, pos + 8))) !== data.readUInt32BE(pos + 8 + length)) {
      throw corrupt(`chunk ${JSON.stringify(type)} at byte ${pos} fails its CRC`);
    }
    pos += 12 + length;
    if (!header) {
      if (type !== 'IHDR' || length !== 13) throw corrupt('its first chunk is not IHDR');
      header = { width: body.readUInt32BE(0), height: body.readUInt32BE(4), depth: body[8], colour: body[9], interlaced: body[12] === 1 };
      if (header.width === 0 || header.height === 0 || !DEPTHS[header.colour]?.includes(header.depth) || body[10] !== 0 || body[11] !== 0 || body[12] > 1) {
        throw corrupt('its IHDR chunk does not read');
      }
      if (header.width * header.height > maxPixels) {
        throw new UndecodableImageError(`image too large: ${header.width} x ${header.height} px, over the limit of ${maxPixels} px`);
      }
      continue;
    }
    if (type === 'IEND') break;
    if (type === 'PLTE') palette = true;
    if (type === 'IDAT') {
      if (idatEnded) throw corrupt('its IDAT chunks are not consecutive');
      idat.push(body);
    } else if (idat.length > 0) {
      idatEnded = true;
    }
  }
  if (idat.length === 0) throw corrupt('no IDAT chunk');
  if (header.colour === 3 && !palette) throw corrupt('a palette image without a PLTE chunk');
  const expected = filteredBytes(header.width, header.height, header.depth * CHANNELS[header.colour], header.interlaced);
  if (expected <= MAX_INFLATED_BYTES) {
    let inflated = expected;
    try {
      // A sync flush returns what a cut stream holds instead of failing on it: its length says whether the pixels are all there.
      inflated = zlib.inflateSync(Buffer.concat(idat), { maxOutputLength: expected, finishFlush: zlib.constants.Z_SYNC_FLUSH }).length;
    } catch (error) {
      // More data than the header declares: libpng and Pillow read what they need and ignore the rest.
      if ((error as NodeJS.ErrnoException).code !== 'ERR_BUFFER_TOO_LARGE') throw corrupt(`its image data does not inflate: ${(error as Error).message}`);
    }
    if (inflated < expected) throw truncated(`its image data holds ${inflated} of the ${expected} bytes its header declares`);
  }
  return { width: header.width, height: header.height };
}

/** Bytes of filtered rows (a filter byte each) an image of this size holds. */
function filteredBytes(width: number, height: number, bitsPerPixel: number, interlaced: boolean): number {
  const rows = (w: number, h: number) => (w === 0 || h === 0 ? 0 : h * (1 + Math.ceil((w * bitsPerPixel) / 8)));
  if (!interlaced) return rows(width, height);
  return ADAM7.reduce((sum, [x, y, dx, dy]) => sum + rows(Math.ceil((width - x) / dx), Math.ceil((height - y) / dy)), 0);
}

function truncated(detail: string): UndecodableImageError {
  return new UndecodableImageError(`truncated png image (${detail})`);
}

function corrupt(detail: string): UndecodableImageError {
  return new UndecodableImageError(`corrupt png image (${detail})`);
}
