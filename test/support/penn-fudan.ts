import * as zlib from 'node:zlib';
import { writeFiles } from './local-files';

/** A box as Penn-Fudan's users compute it from a mask: [x0, y0, x1, y1], x1 and y1 exclusive. */
export type Box = [number, number, number, number];

/** What a synthetic image holds: its key (the file's name without `.png`) and a box per pedestrian, in mask-value order. */
export interface SyntheticSample {
  readonly key: string;
  readonly boxes: Box[];
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** PNG colour types (PNG spec, 11.2.2): 8-bit RGB, 8-bit palette indices. */
const RGB = 2;
const PALETTE = 3;
/** Pedestrians are this wide and tall, side by side, at most three an image. */
const PERSON = { width: 10, height: 30, pitch: 20 };

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** A PNG of 8-bit samples, rows unfiltered; `palette` (RGB triplets) for colour type 3. */
function png(width: number, height: number, colour: number, pixels: Buffer, palette?: Buffer): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(8, 8);
  header.writeUInt8(colour, 9);
  const stride = pixels.length / height;
  const rows = Buffer.concat(Array.from({ length: height }, (_, y) => Buffer.concat([Buffer.alloc(1), pixels.subarray(y * stride, (y + 1) * stride)])));
  return Buffer.concat([
    PNG_SIGNATURE, chunk('IHDR', header), ...(palette ? [chunk('PLTE', palette)] : []), chunk('IDAT', zlib.deflateSync(rows)), chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Image `index`'s pedestrians: 1 to 3 rectangles, shifted a little from one image to the next. */
function boxesOf(index: number, width: number, height: number): Box[] {
  return Array.from({ length: 1 + (index % 3) }, (_, person) => {
    const x0 = 2 + person * PERSON.pitch + (index % 5);
    const y0 = 2 + (index % 7);
    return [x0, y0, Math.min(width, x0 + PERSON.width), Math.min(height, y0 + PERSON.height)] as Box;
  });
}

/**
 * The Penn-Fudan Pedestrian layout, made up: `PNGImages/FudanPed000NN.png` (RGB, a grey background and
 * a coloured rectangle per pedestrian) and `PedMasks/FudanPed000NN_mask.png`, a palette image as the
 * dataset's are: index 0 the background, 1..n each pedestrian. At least 64 × 48 pixels, for three pedestrians.
 */
export function pennFudanLikeFolder(root: string, count: number, width = 64, height = 48): SyntheticSample[] {
  const files: Record<string, Buffer> = {};
  const samples: SyntheticSample[] = [];
  const maskPalette = Buffer.from([0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255]);
  for (let index = 0; index < count; index++) {
    const key = `FudanPed${String(index + 1).padStart(5, '0')}`;
    const boxes = boxesOf(index, width, height);
    const rgb = Buffer.alloc(width * height * 3, 96 + (index * 7) % 64);
    const mask = Buffer.alloc(width * height);
    boxes.forEach(([x0, y0, x1, y1], person) => {
      for (let y = y0; y < y1; y++) {
        for (let x = x0; x < x1; x++) {
          mask[y * width + x] = person + 1;
          rgb.set([200 - person * 60, 40 + person * 70, 120], (y * width + x) * 3);
        }
      }
    });
    files[`PNGImages/${key}.png`] = png(width, height, RGB, rgb);
    files[`PedMasks/${key}_mask.png`] = png(width, height, PALETTE, mask, maskPalette);
    samples.push({ key, boxes });
  }
  writeFiles(root, files);
  return samples;
}
