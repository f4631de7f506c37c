import { EntropyReader } from './jpeg-entropy-reader';
import { FAST_BITS, HuffmanTable } from './jpeg-huffman';
import { UndecodableImageError } from './undecodable-image';

/** What the check learnt of a JPEG. */
export interface JpegFacts {
  readonly width: number;
  readonly height: number;
  readonly progressive: boolean;
  /** Bytes of DCT coefficients a decoder holds at once for a progressive JPEG (libjpeg keeps them all: 2 bytes each); 0 for sequential ones. */
  readonly coefficientBytes: number;
  /** Colour components: 1 (grey), 3 (YCbCr, RGB) or 4 (CMYK, YCCK). */
  readonly components: number;
}

interface Component {
  readonly id: number;
  readonly h: number;
  readonly v: number;
  readonly quantTable: number;
  /** Blocks across and down the component, and its first-scan coverage of coefficients 0-63. */
  readonly blocksWide: number;
  readonly blocksHigh: number;
  readonly covered: boolean[];
  /** Set by the first progressive AC scan of the component (see nonzeroOf). */
  nonzero?: Uint32Array;
}

interface Frame {
  readonly width: number;
  readonly height: number;
  readonly progressive: boolean;
  readonly arithmetic: boolean;
  readonly components: Component[];
  readonly hMax: number;
  readonly vMax: number;
}

/** libjpeg-turbo's JPEG_MAX_DIMENSION: larger images are refused by every reader built on it. */
export const MAX_DIMENSION = 65500;
/** libjpeg's limit on blocks in one MCU of an interleaved scan (D_MAX_BLOCKS_IN_MCU). */
const MAX_BLOCKS_IN_MCU = 10;

/**
 * Checks a whole JPEG the way libjpeg-turbo (Pillow, torchvision, libvips) would read it, without
 * decoding pixels: the markers from SOI to EOI, every segment's length, the frame (8-bit
 * baseline, extended or progressive; lossless and hierarchical JPEGs, which the readers refuse, are
 * refused), the quantization and Huffman tables, and every scan's entropy-coded data read symbol
 * by symbol, block by block, up to the blocks the frame declares. So a file cut short is refused
 * even when `FF D9` was appended (libjpeg would fill the rest with grey and only warn), and so is
 * a header that claims more pixels than its data holds (a header bomb), without allocating
 * anything per pixel. Written here because no npm library does this: the JPEG decoders
 * (jpeg-js, sharp) decode every pixel (many times the cost of this walk) and accept what libjpeg
 * accepts with a warning. Limits, documented in docs/image-preprocessing.md: arithmetic-coded
 * scans and scans whose Huffman tables are libjpeg's defaults (Motion-JPEG frames, no DHT) are
 * checked for structure only, not block by block.
 */
export function checkJpeg(data: Buffer, maxPixels: number): JpegFacts {
  const dcTables: (HuffmanTable | undefined)[] = [];
  const acTables: (HuffmanTable | undefined)[] = [];
  const quantTables = new Set<number>();
  let frame: Frame | undefined;
  let restartInterval = 0;
  let scans = 0;
  let pos = 2;
  for (;;) {
    pos = nextMarker(data, pos);
    if (pos + 1 >= data.length) throw truncated('it ends before its end marker');
    const marker = data[pos + 1];
    pos += 2;
    if (marker === 0xd9) break;
    if (marker === 0xd8) throw corrupt('a second SOI marker');
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) continue;
    if (pos + 2 > data.length) throw truncated('it ends inside a marker segment');
    const length = data.readUInt16BE(pos);
    if (length < 2) throw corrupt(`marker 0x${marker.toString(16)} has a length of ${length}`);
    const end = pos + length;
    if (end > data.length) throw truncated(`it ends inside marker 0x${marker.toString(16)}'s segment`);
    const segment = data.subarray(pos + 2, end);
    pos = end;
    switch (marker) {
      case 0xc0: case 0xc1: case 0xc2: case 0xc9: case 0xca:
        if (frame) throw corrupt('two frame (SOF) markers');
        frame = parseFrame(segment, marker, maxPixels);
        break;
      case 0xc3: case 0xc5: case 0xc6: case 0xc7: case 0xcb: case 0xcd: case 0xce: case 0xcf:
        throw new UndecodableImageError(`unsupported image format 'jpeg' (${marker === 0xc3 || marker === 0xcb ? 'lossless' : 'hierarchical'} `
          + 'JPEG, which the training readers do not decode)');
      case 0xc4:
        parseHuffmanTables(segment, dcTables, acTables);
        break;
      case 0xdb:
        parseQuantTables(segment, quantTables);
        break;
      case 0xdd:
        if (segment.length !== 2) throw corrupt('a DRI segment that is not 2 bytes');
        restartInterval = segment.readUInt16BE(0);
        break;
      case 0xda:
        if (!frame) throw corrupt('a scan (SOS) before the frame (SOF)');
        pos = readScan(data, pos, parseScan(segment, frame, quantTables), frame, dcTables, acTables, restartInterval, scans + 1);
        scans++;
        break;
      default:
        // APPn, COM, DNL, DAC, JPGn: nothing the check needs.
        break;
    }
  }
  if (!frame || scans === 0) throw corrupt(frame ? 'no scan before the end marker' : 'no frame (SOF) before the end marker');
  for (const component of frame.components) {
    const missing = frame.progressive ? component.covered.indexOf(false) : (component.covered[0] ? -1 : 0);
    if (missing >= 0) throw truncated(`component ${component.id} has no scan for coefficient ${missing}: scans are missing`);
  }
  const coefficientBytes = frame.progressive
    ? frame.components.reduce((sum, c) => sum + roundUp(c.blocksWide, c.h) * roundUp(c.blocksHigh, c.v) * 128, 0)
    : 0;
  return { width: frame.width, height: frame.height, progressive: frame.progressive, coefficientBytes, components: frame.components.length };
}

function parseFrame(segment: Buffer, marker: number, maxPixels: number): Frame {
  if (segment.length < 6) throw corrupt('a frame (SOF) segment too short');
  const precision = segment[0];
  const height = segment.readUInt16BE(1);
  const width = segment.readUInt16BE(3);
  const count = segment[5];
  if (precision !== 8) {
    throw new UndecodableImageError(`unsupported image format 'jpeg' (${precision}-bit samples: the training readers decode 8-bit JPEGs)`);
  }
  if (width === 0 || height === 0) throw corrupt(`a frame of ${width} x ${height} px (a height set by a DNL marker is not supported by the readers)`);
  if (width > MAX_DIMENSION || height > MAX_DIMENSION) {
    throw new UndecodableImageError(`image too large: ${width} x ${height} px, over libjpeg's ${MAX_DIMENSION} px a side`);
  }
  if (width * height > maxPixels) throw new UndecodableImageError(`image too large: ${width} x ${height} px, over the limit of ${maxPixels} px`);
  if (count !== 1 && count !== 3 && count !== 4) throw corrupt(`${count} colour components (the readers take 1, 3 or 4)`);
  if (segment.length !== 6 + 3 * count) throw corrupt('a frame (SOF) segment whose length does not match its components');
  const raw = Array.from({ length: count }, (_, i) => ({ id: segment[6 + 3 * i], h: segment[7 + 3 * i] >> 4, v: segment[7 + 3 * i] & 15, q: segment[8 + 3 * i] }));
  for (const c of raw) {
    if (c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4) throw corrupt(`component ${c.id} has sampling factors ${c.h}x${c.v} (1-4 allowed)`);
    if (c.q > 3) throw corrupt(`component ${c.id} uses quantization table ${c.q} (0-3 allowed)`);
  }
  const hMax = Math.max(...raw.map((c) => c.h));
  const vMax = Math.max(...raw.map((c) => c.v));
  const components = raw.map((c) => ({
    id: c.id, h: c.h, v: c.v, quantTable: c.q,
    blocksWide: Math.ceil(Math.ceil((width * c.h) / hMax) / 8),
    blocksHigh: Math.ceil(Math.ceil((height * c.v) / vMax) / 8),
    covered: new Array<boolean>(64).fill(false),
  }));
  return { width, height, progressive: marker === 0xc2 || marker === 0xca, arithmetic: marker >= 0xc9, components, hMax, vMax };
}

function parseHuffmanTables(segment: Buffer, dcTables: (HuffmanTable | undefined)[], acTables: (HuffmanTable | undefined)[]): void {
  let pos = 0;
  while (pos < segment.length) {
    if (pos + 17 > segment.length) throw corrupt('a Huffman table (DHT) segment too short');
    const kind = segment[pos] >> 4;
    const id = segment[pos] & 15;
    const counts = segment.subarray(pos + 1, pos + 17);
    const total = counts.reduce((sum, n) => sum + n, 0);
    const symbols = segment.subarray(pos + 17, pos + 17 + total);
    if (kind > 1 || id > 3 || total > 256 || symbols.length !== total) throw corrupt('a Huffman table (DHT) that does not read');
    if (kind === 0 && symbols.some((s) => s > 15)) throw corrupt('a DC Huffman table with a symbol over 15');
    const table = builtTable(segment.toString('latin1', pos + 1, pos + 17 + total), counts, symbols);
    if (!table) throw corrupt('a Huffman table whose codes do not fit their lengths');
    (kind === 0 ? dcTables : acTables)[id] = table;
    pos += 17 + total;
  }
}

/**
 * Tables built before, by their counts and symbols: most encoders write the same few (libjpeg's
 * standard ones), and building one (four typed arrays) cost as much as checking a small file's data.
 */
const builtTables = new Map<string, HuffmanTable | undefined>();
const MAX_BUILT_TABLES = 256;

function builtTable(bytes: string, counts: Uint8Array, symbols: Uint8Array): HuffmanTable | undefined {
  if (builtTables.has(bytes)) return builtTables.get(bytes);
  if (builtTables.size >= MAX_BUILT_TABLES) builtTables.clear();
  const table = HuffmanTable.build(counts, symbols);
  builtTables.set(bytes, table);
  return table;
}

function parseQuantTables(segment: Buffer, defined: Set<number>): void {
  let pos = 0;
  while (pos < segment.length) {
    const precision = segment[pos] >> 4;
    const id = segment[pos] & 15;
    if (precision > 1 || id > 3) throw corrupt('a quantization table (DQT) that does not read');
    pos += 1 + 64 * (precision + 1);
    if (pos > segment.length) throw corrupt('a quantization table (DQT) segment too short');
    defined.add(id);
  }
}

interface Scan {
  readonly components: { readonly component: Component; readonly dc: number; readonly ac: number }[];
  readonly start: number;
  readonly end: number;
  readonly high: number;
}

function parseScan(segment: Buffer, frame: Frame, quantTables: Set<number>): Scan {
  const count = segment[0];
  if (count < 1 || count > 4 || segment.length !== 4 + 2 * count) throw corrupt('a scan (SOS) header that does not read');
  const components = Array.from({ length: count }, (_, i) => {
    const component = frame.components.find((c) => c.id === segment[1 + 2 * i]);
    if (!component) throw corrupt(`a scan of component ${segment[1 + 2 * i]}, which the frame does not have`);
    if (!quantTables.has(component.quantTable)) throw corrupt(`quantization table ${component.quantTable} is used before it is defined`);
    return { component, dc: segment[2 + 2 * i] >> 4, ac: segment[2 + 2 * i] & 15 };
  });
  const start = segment[1 + 2 * count];
  const end = segment[2 + 2 * count];
  const high = segment[3 + 2 * count] >> 4;
  const low = segment[3 + 2 * count] & 15;
  if (frame.progressive) {
    const dcScan = start === 0;
    if (end > 63 || start > end || (dcScan && end !== 0) || (!dcScan && count !== 1) || low > 13 || (high !== 0 && high !== low + 1)) {
      throw corrupt(`a progressive scan with spectral selection ${start}-${end} and approximation ${high}/${low}, which is not allowed`);
    }
  }
  if (count > 1 && components.reduce((sum, c) => sum + c.component.h * c.component.v, 0) > MAX_BLOCKS_IN_MCU) {
    throw corrupt('sampling factors too large for an interleaved scan');
  }
  const [first, last] = frame.progressive ? [start, end] : [0, 63];
  if (!frame.progressive || high === 0) {
    for (const { component } of components) component.covered.fill(true, first, last + 1);
  }
  return { components, start: first, end: last, high: frame.progressive ? high : 0 };
}

/**
 * Reads one scan's entropy-coded data through every MCU the frame declares (restart markers
 * where the interval puts them) and returns the position of the marker after it.
 */
function readScan(data: Buffer, pos: number, scan: Scan, frame: Frame, dcTables: (HuffmanTable | undefined)[],
  acTables: (HuffmanTable | undefined)[], restartInterval: number, number: number): number {
  const reader = new EntropyReader(data, pos);
  const kind: ScanKind = !frame.progressive ? 'sequential'
    : scan.start === 0 ? (scan.high === 0 ? 'dcFirst' : 'dcRefine') : (scan.high === 0 ? 'acFirst' : 'acRefine');
  const needsDc = kind === 'sequential' || kind === 'dcFirst';
  const needsAc = kind === 'sequential' || kind === 'acFirst' || kind === 'acRefine';
  if (frame.arithmetic || scan.components.some((c) => (needsDc && !dcTables[c.dc]) || (needsAc && !acTables[c.ac]))) return reader.endSegment();
  const single = scan.components.length === 1;
  const mcusWide = single ? scan.components[0].component.blocksWide : Math.ceil(frame.width / (8 * frame.hMax));
  const mcusHigh = single ? scan.components[0].component.blocksHigh : Math.ceil(frame.height / (8 * frame.vMax));
  const mcus = mcusWide * mcusHigh;
  // Per MCU, the blocks of each component in order, with their tables.
  const blockDc: HuffmanTable[] = [];
  const blockAc: HuffmanTable[] = [];
  for (const { component, dc, ac } of scan.components) {
    const blocks = single ? 1 : component.h * component.v;
    for (let b = 0; b < blocks; b++) {
      blockDc.push(dcTables[dc]!);
      blockAc.push(acTables[ac]!);
    }
  }
  // AC scans of a progressive JPEG have one component, one block an MCU: the MCU's number is the block's.
  const nonzero = kind === 'acFirst' || kind === 'acRefine' ? nonzeroOf(scan.components[0].component) : undefined;
  const state: BlockState = { eobRun: 0 };
  let restartsSeen = 0;
  for (let mcu = 0; mcu < mcus; mcu++) {
    if (restartInterval > 0 && mcu > 0 && mcu % restartInterval === 0) {
      if (reader.overran) throw prematureEnd(number, mcu, mcus);
      const marker = reader.endSegment();
      if (marker + 1 >= data.length || data[marker + 1] !== 0xd0 + (restartsSeen & 7)) {
        throw corrupt(`scan ${number} lacks restart marker ${restartsSeen & 7} after MCU ${mcu} of ${mcus}`);
      }
      restartsSeen++;
      reader.restart(marker + 2);
      state.eobRun = 0;
    }
    for (let b = 0; b < blockDc.length; b++) {
      let ok = true;
      switch (kind) {
        case 'sequential': ok = readDc(reader, blockDc[b]) && readAc(reader, blockAc[b], 1, 63, state, undefined, 0); break;
        case 'dcFirst': ok = readDc(reader, blockDc[b]); break;
        case 'dcRefine': reader.skip(1); break;
        case 'acFirst': ok = readAc(reader, blockAc[b], scan.start, scan.end, state, nonzero, mcu * 2); break;
        case 'acRefine': ok = refineAc(reader, blockAc[b], scan.start, scan.end, state, nonzero!, mcu * 2); break;
      }
      if (!ok) throw reader.overran ? prematureEnd(number, mcu, mcus) : corrupt(`scan ${number} has a bad Huffman code in MCU ${mcu} of ${mcus}`);
    }
    if (reader.overran) throw prematureEnd(number, mcu + 1, mcus);
  }
  return reader.endSegment();
}

type ScanKind = 'sequential' | 'dcFirst' | 'dcRefine' | 'acFirst' | 'acRefine';

/** A progressive AC scan's run of blocks with no more coefficients (EOBRUN), carried from block to block. */
interface BlockState {
  eobRun: number;
}

/**
 * Which AC coefficients (zig-zag order) of each block of a component are nonzero so far: a
 * refinement scan reads a correction bit for each of them, so reading it needs this much of the
 * earlier scans (two words a block; made at the component's first AC scan, whose data then holds
 * at least a bit a block, so a header bomb never gets this far).
 */
function nonzeroOf(component: Component): Uint32Array {
  component.nonzero ??= new Uint32Array(2 * component.blocksWide * component.blocksHigh);
  return component.nonzero;
}

function readDc(reader: EntropyReader, table: HuffmanTable): boolean {
  const size = reader.symbol(table);
  if (size < 0) return false;
  reader.skip(size);
  return true;
}

/** A block's AC coefficients `start`-`end` of a sequential scan or a progressive first scan; records which become nonzero. */
function readAc(reader: EntropyReader, table: HuffmanTable, start: number, end: number, state: BlockState,
  nonzero: Uint32Array | undefined, word: number): boolean {
  if (state.eobRun > 0) {
    state.eobRun--;
    return true;
  }
  const fastCoefficient = table.fastCoefficient;
  const bytes = reader.bytes;
  // The reader's position in a local while coefficients are read by lookup (peekFast inlined), as
  // most are: written back before the reader reads for itself.
  let bitPos = reader.bitPos;
  for (let k = start; k <= end; k++) {
    const at = bitPos >>> 3;
    const fast = fastCoefficient[(((bytes[at] << 16) | (bytes[at + 1] << 8) | bytes[at + 2]) >>> (24 - FAST_BITS - (bitPos & 7))) & FAST_MASK];
    if (fast !== 0) {
      bitPos += fast & 0xff;
      k += fast >> 8;
      if (nonzero && k <= 63) nonzero[word + (k >> 5)] |= 1 << (k & 31);
      continue;
    }
    reader.bitPos = bitPos;
    const rs = reader.symbol(table);
    if (rs < 0) return false;
    const run = rs >> 4;
    const size = rs & 15;
    if (size !== 0) {
      k += run;
      reader.skip(size);
      if (nonzero && k <= 63) nonzero[word + (k >> 5)] |= 1 << (k & 31);
    } else if (run === 15) {
      k += 15;
    } else {
      // End of block; in a progressive scan, of a run of 2^run + the next bits blocks.
      if (nonzero) state.eobRun = (1 << run) + (run > 0 ? reader.read(run) : 0) - 1;
      return true;
    }
    bitPos = reader.bitPos;
  }
  reader.bitPos = bitPos;
  return true;
}

const FAST_MASK = (1 << FAST_BITS) - 1;

/** A block of a progressive AC refinement scan, as libjpeg's decode_mcu_AC_refine reads it (jdphuff.c). */
function refineAc(reader: EntropyReader, table: HuffmanTable, start: number, end: number, state: BlockState,
  nonzero: Uint32Array, word: number): boolean {
  let k = start;
  if (state.eobRun === 0) {
    for (; k <= end; k++) {
      const rs = reader.symbol(table);
      if (rs < 0) return false;
      let run = rs >> 4;
      const size = rs & 15;
      if (size !== 0) {
        reader.skip(1);
      } else if (run !== 15) {
        state.eobRun = (1 << run) + (run > 0 ? reader.read(run) : 0);
        break;
      }
      // Past the coefficients already nonzero (a correction bit each) and `run` still-zero ones.
      while (k <= end) {
        if (nonzero[word + (k >> 5)] & (1 << (k & 31))) {
          reader.skip(1);
        } else if (--run < 0) {
          break;
        }
        k++;
      }
      if (size !== 0 && k <= 63) nonzero[word + (k >> 5)] |= 1 << (k & 31);
    }
  }
  if (state.eobRun > 0) {
    for (; k <= end; k++) if (nonzero[word + (k >> 5)] & (1 << (k & 31))) reader.skip(1);
    state.eobRun--;
  }
  return true;
}

function prematureEnd(scan: number, mcu: number, mcus: number): UndecodableImageError {
  return truncated(`premature end of data: scan ${scan}'s data stops in MCU ${mcu} of ${mcus}`);
}

/** The next marker at or after `pos` (bytes before it, which libjpeg skips with a warning, skipped), or the file's length. */
function nextMarker(data: Buffer, pos: number): number {
  while (pos + 1 < data.length && !(data[pos] === 0xff && data[pos + 1] !== 0xff && data[pos + 1] !== 0)) pos++;
  return pos + 1 < data.length ? pos : data.length;
}

function roundUp(blocks: number, factor: number): number {
  return Math.ceil(blocks / factor) * factor;
}

function truncated(detail: string): UndecodableImageError {
  return new UndecodableImageError(`truncated jpeg image (${detail})`);
}

function corrupt(detail: string): UndecodableImageError {
  return new UndecodableImageError(`corrupt jpeg image (${detail})`);
}
