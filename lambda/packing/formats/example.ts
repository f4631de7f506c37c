/**
 * tf.train.Example, hand-encoded (tensorflow/core/example/{example,feature}.proto):
 * `Example { Features features = 1 }`, `Features { map<string, Feature> feature = 1 }`,
 * `Feature { oneof { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3 } }`,
 * float and int64 lists packed. The output is byte-identical to TensorFlow's for the same features
 * (checked against tensorflow-singles.tfrecords), with map keys sorted for deterministic bytes.
 */
import type { Encoded} from './encoded';
import { encodedToBuffer } from './encoded';
import {
  WIRE_FIXED32,
  WIRE_LENGTH_DELIMITED,
  WIRE_VARINT,
  WireReader,
  WireWriter,
  delimitedFieldSize,
  tagByte,
  varint64Size,
  varintSize,
} from './protobuf-wire';
import { FormatError } from './shard-format';

/** A `bytes_list` feature. */
export interface BytesFeature {
  readonly bytesList: readonly Buffer[];
}

/** An `int64_list` feature: numbers must be safe integers; bigints cover the rest of int64. */
export interface Int64Feature {
  readonly int64List: readonly (number | bigint)[];
}

/** A `float_list` feature: values are stored as float32. */
export interface FloatFeature {
  readonly floatList: readonly number[];
}

/** One feature: exactly one of the three lists. */
export type Feature = BytesFeature | Int64Feature | FloatFeature;

/** Feature name → feature. */
export type Features = Readonly<Record<string, Feature>>;

/** What an image record holds. */
export interface ImageExampleInput {
  /** The file's bytes, stored as `image/encoded`. */
  readonly encoded: Buffer;
  /** Class index stored as `image/class/label`; -1 (no label) omits the feature. */
  readonly label: number;
  /** Stored as `image/filename`, UTF-8. */
  readonly filename: string;
  /** Stored as `image/format`, e.g. `jpeg` or `png`. */
  readonly format: string;
}

/** The names of an image record's features. */
const IMAGE_LABEL = Buffer.from('image/class/label');
const IMAGE_ENCODED = Buffer.from('image/encoded');
const IMAGE_FILENAME = Buffer.from('image/filename');
const IMAGE_FORMAT = Buffer.from('image/format');

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Encodes an Example as one buffer. */
export function encodeExample(features: Features): Buffer {
  return encodedToBuffer(exampleEncoding(features));
}

/** An Example, sized, written where the caller wants it (the shard writer: in its output block). */
export function exampleEncoding(features: Features): Encoded {
  const planned = Object.keys(features)
    .map((name) => planFeature(name, features[name]))
    .sort((a, b) => Buffer.compare(a.key, b.key));
  return plannedExample(planned);
}

/**
 * The record of one image file: `image/class/label` (unless the label is -1), `image/encoded`,
 * `image/filename`, `image/format`, in that order, which is the byte order of their names. Written
 * field by field with sizes computed from the lengths: the generic `exampleEncoding` plans each
 * feature as objects, and that planning cost more than the rest of a 5 KB record's framing. The
 * bytes are the generic encoder's (tests compare them).
 */
export function imageExampleEncoding(input: ImageExampleInput): Encoded {
  const { encoded, label, filename, format } = input;
  if (!Number.isSafeInteger(label) || label < -1) {
    throw new RangeError(`label must be a class index or -1 (no label), got ${label}`);
  }
  const filenameBytes = Buffer.byteLength(filename, 'utf8');
  const formatBytes = Buffer.byteLength(format, 'utf8');
  const labelEntry = label === -1 ? 0 : int64EntrySize(IMAGE_LABEL.length, label);
  const encodedEntry = bytesEntrySize(IMAGE_ENCODED.length, encoded.length);
  const filenameEntry = bytesEntrySize(IMAGE_FILENAME.length, filenameBytes);
  const formatEntry = bytesEntrySize(IMAGE_FORMAT.length, formatBytes);
  const featuresSize = (label === -1 ? 0 : delimitedFieldSize(labelEntry))
    + delimitedFieldSize(encodedEntry) + delimitedFieldSize(filenameEntry) + delimitedFieldSize(formatEntry);
  return exampleOf(featuresSize, (writer) => {
    if (label !== -1) {
      const packedSize = varintSize(label);
      writeEntryHead(writer, IMAGE_LABEL, labelEntry, delimitedFieldSize(delimitedFieldSize(packedSize)));
      writer.byte(tagByte(3, WIRE_LENGTH_DELIMITED));
      writer.varint(delimitedFieldSize(packedSize));
      writer.byte(tagByte(1, WIRE_LENGTH_DELIMITED));
      writer.varint(packedSize);
      writer.varint(label);
    }
    writeOneBytesEntry(writer, IMAGE_ENCODED, encodedEntry, encoded.length);
    writer.bytes(encoded);
    writeOneBytesEntry(writer, IMAGE_FILENAME, filenameEntry, filenameBytes);
    writer.utf8(filename, filenameBytes);
    writeOneBytesEntry(writer, IMAGE_FORMAT, formatEntry, formatBytes);
    writer.utf8(format, formatBytes);
  });
}

/**
 * The most bytes `imageExampleEncoding` can take for this file, whatever its label: the exact
 * size with a label of 2³² − 1 (one absent, -1, takes less). For planning, before the bytes are read.
 */
export function imageExampleSizeBound(filename: string, format: string, encodedBytes: number): number {
  const labelEntry = int64EntrySize(IMAGE_LABEL.length, 2 ** 32 - 1);
  const encodedEntry = bytesEntrySize(IMAGE_ENCODED.length, encodedBytes);
  const filenameEntry = bytesEntrySize(IMAGE_FILENAME.length, Buffer.byteLength(filename, 'utf8'));
  const formatEntry = bytesEntrySize(IMAGE_FORMAT.length, Buffer.byteLength(format, 'utf8'));
  return delimitedFieldSize(delimitedFieldSize(labelEntry) + delimitedFieldSize(encodedEntry)
    + delimitedFieldSize(filenameEntry) + delimitedFieldSize(formatEntry));
}

/** Body of a map entry whose feature is a BytesList of one value of `valueBytes` bytes. */
function bytesEntrySize(keyBytes: number, valueBytes: number): number {
  return entrySize(keyBytes, delimitedFieldSize(delimitedFieldSize(valueBytes)));
}

/** Body of a map entry whose feature is an Int64List of one non-negative value. */
function int64EntrySize(keyBytes: number, value: number): number {
  return entrySize(keyBytes, delimitedFieldSize(delimitedFieldSize(varintSize(value))));
}

/** Body of the map entry `{ key = 1; value = 2 }` (value: a Feature of `featureSize` bytes). */
function entrySize(keyBytes: number, featureSize: number): number {
  return delimitedFieldSize(keyBytes) + delimitedFieldSize(featureSize);
}

/** A map entry up to its Feature's body: entry tag and length, key, Feature tag and length. */
function writeEntryHead(writer: WireWriter, key: Buffer, entryBytes: number, featureSize: number): void {
  writer.byte(tagByte(1, WIRE_LENGTH_DELIMITED));
  writer.varint(entryBytes);
  writer.byte(tagByte(1, WIRE_LENGTH_DELIMITED));
  writer.varint(key.length);
  writer.bytes(key);
  writer.byte(tagByte(2, WIRE_LENGTH_DELIMITED));
  writer.varint(featureSize);
}

/** A BytesList entry of one value, up to the value's bytes (the caller writes them). */
function writeOneBytesEntry(writer: WireWriter, key: Buffer, entryBytes: number, valueBytes: number): void {
  const listSize = delimitedFieldSize(valueBytes);
  writeEntryHead(writer, key, entryBytes, delimitedFieldSize(listSize));
  writer.byte(tagByte(1, WIRE_LENGTH_DELIMITED));
  writer.varint(listSize);
  writer.byte(tagByte(1, WIRE_LENGTH_DELIMITED));
  writer.varint(valueBytes);
}

/** Features sorted by name, as an Example to write. */
function plannedExample(planned: readonly PlannedFeature[]): Encoded {
  let featuresSize = 0;
  for (const p of planned) featuresSize += delimitedFieldSize(p.entrySize);
  return exampleOf(featuresSize, (writer) => {
    for (const p of planned) writeEntry(writer, p);
  });
}

/** `Example { Features features = 1 }` whose Features body, `featuresSize` bytes, `writeEntries` writes. */
function exampleOf(featuresSize: number, writeEntries: (writer: WireWriter) => void): Encoded {
  const size = delimitedFieldSize(featuresSize);
  return {
    size,
    writeTo(target, offset) {
      const writer = new WireWriter(target, offset);
      writer.byte(tagByte(1, WIRE_LENGTH_DELIMITED));
      writer.varint(featuresSize);
      writeEntries(writer);
      // A wrong precomputed size is a bug in this file, not bad input.
      if (writer.position !== offset + size) {
        throw new Error(`protobuf size mismatch: computed ${size} bytes, wrote ${writer.position - offset}`);
      }
      return undefined;
    },
  };
}

/**
 * Decodes an Example. Accepts what protobuf parsers accept: packed and unpacked numeric lists,
 * unknown fields (skipped), repeated fields (merged). `bytes` values are views into `example`;
 * int64 values are numbers when safe integers, bigints otherwise. Throws a FormatError naming the
 * byte offset of the first malformed field.
 */
export function decodeExample(example: Buffer): Record<string, Feature> {
  const features: Record<string, Feature> = {};
  const reader = new WireReader(example, 0, example.length, 'Example');
  while (!reader.done) {
    const { fieldNumber, wireType, at } = readTag(reader);
    if (fieldNumber === 1 && wireType === WIRE_LENGTH_DELIMITED) {
      decodeFeatures(reader.nested(), features);
    } else {
      reader.skip(wireType, at);
    }
  }
  return features;
}

interface PlannedFeature {
  readonly name: string;
  readonly kind: FeatureKind;
  readonly key: Buffer;
  readonly feature: Feature;
  /** Body of the BytesList / FloatList / Int64List message. */
  readonly listSize: number;
  /** Body of the packed `value` field (float and int64 lists). */
  readonly packedSize: number;
  /** Body of the Feature message. */
  readonly featureSize: number;
  /** Body of the map entry `{ key = 1; value = 2 }`. */
  readonly entrySize: number;
  /** int64 values ready for the wire: non-negative numbers, or bigints in [0, 2^64). */
  readonly wireInt64s: readonly (number | bigint)[];
}

function planFeature(name: string, feature: Feature): PlannedFeature {
  const key = nameBytes(name);
  const kind = kindOf(name, feature);
  let listSize = 0;
  let packedSize = 0;
  let wireInt64s: (number | bigint)[] = [];
  switch (kind) {
    case 'bytes':
      for (const value of (feature as BytesFeature).bytesList) {
        listSize += delimitedFieldSize(value.length);
      }
      break;
    case 'float': {
      const values = (feature as FloatFeature).floatList;
      packedSize = 4 * values.length;
      listSize = values.length > 0 ? delimitedFieldSize(packedSize) : 0;
      break;
    }
    case 'int64': {
      wireInt64s = (feature as Int64Feature).int64List.map((value) => toWireInt64(name, value));
      for (const value of wireInt64s) packedSize += typeof value === 'number' ? varintSize(value) : varint64Size(value);
      listSize = wireInt64s.length > 0 ? delimitedFieldSize(packedSize) : 0;
      break;
    }
  }
  const featureSize = delimitedFieldSize(listSize);
  return { name, kind, key, feature, listSize, packedSize, featureSize, entrySize: entrySize(key.length, featureSize), wireInt64s };
}

function writeEntry(writer: WireWriter, p: PlannedFeature): void {
  writeEntryHead(writer, p.key, p.entrySize, p.featureSize);
  switch (p.kind) {
    case 'bytes':
      writer.byte(tagByte(1, WIRE_LENGTH_DELIMITED));
      writer.varint(p.listSize);
      for (const value of (p.feature as BytesFeature).bytesList) {
        writer.byte(tagByte(1, WIRE_LENGTH_DELIMITED));
        writer.varint(value.length);
        writer.bytes(value);
      }
      break;
    case 'float': {
      writer.byte(tagByte(2, WIRE_LENGTH_DELIMITED));
      writer.varint(p.listSize);
      const values = (p.feature as FloatFeature).floatList;
      if (values.length === 0) break;
      writer.byte(tagByte(1, WIRE_LENGTH_DELIMITED));
      writer.varint(p.packedSize);
      for (const value of values) writer.floatLE(value);
      break;
    }
    case 'int64':
      writer.byte(tagByte(3, WIRE_LENGTH_DELIMITED));
      writer.varint(p.listSize);
      if (p.wireInt64s.length === 0) break;
      writer.byte(tagByte(1, WIRE_LENGTH_DELIMITED));
      writer.varint(p.packedSize);
      for (const value of p.wireInt64s) {
        if (typeof value === 'number') writer.varint(value);
        else writer.varint64(value);
      }
      break;
  }
}

type FeatureKind = 'bytes' | 'float' | 'int64';

function kindOf(name: string, feature: Feature): FeatureKind {
  const isBytes = 'bytesList' in feature;
  const isFloat = 'floatList' in feature;
  const isInt64 = 'int64List' in feature;
  if (Number(isBytes) + Number(isFloat) + Number(isInt64) !== 1) {
    throw new RangeError(`feature '${name}' must have exactly one of bytesList, floatList, int64List`);
  }
  return isBytes ? 'bytes' : isFloat ? 'float' : 'int64';
}

/**
 * UTF-8 bytes of feature names: an image record uses the same four names every time, and encoding
 * them was a measurable share of a 5 KB record's time. Bounded so arbitrary names cannot grow it.
 */
const nameCache = new Map<string, Buffer>();
const NAME_CACHE_LIMIT = 256;

function nameBytes(name: string): Buffer {
  let bytes = nameCache.get(name);
  if (bytes === undefined) {
    bytes = Buffer.from(name, 'utf8');
    if (nameCache.size < NAME_CACHE_LIMIT) nameCache.set(name, bytes);
  }
  return bytes;
}

/** int64 varints are two's complement over 64 bits (not zigzag): negatives take 10 bytes. */
function toWireInt64(name: string, value: number | bigint): number | bigint {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      throw new RangeError(`int64 feature '${name}' needs safe integers or bigints, got ${value}`);
    }
    return value >= 0 ? value : BigInt.asUintN(64, BigInt(value));
  }
  if (value < INT64_MIN || value > INT64_MAX) {
    throw new RangeError(`int64 feature '${name}' value ${value} is outside the int64 range`);
  }
  return BigInt.asUintN(64, value);
}

// Decoding -------------------------------------------------------------------------------------

/** Proto3 strings must be valid UTF-8; a fatal decoder reports a broken key instead of mangling it. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

interface Tag {
  readonly fieldNumber: number;
  readonly wireType: number;
  readonly at: number;
}

function readTag(reader: WireReader): Tag {
  const at = reader.position;
  const tag = reader.varint();
  const fieldNumber = Math.floor(tag / 8);
  if (fieldNumber === 0) throw reader.error(at, 'field number 0');
  return { fieldNumber, wireType: tag % 8, at };
}

function decodeFeatures(reader: WireReader, into: Record<string, Feature>): void {
  while (!reader.done) {
    const { fieldNumber, wireType, at } = readTag(reader);
    if (fieldNumber === 1 && wireType === WIRE_LENGTH_DELIMITED) {
      const [name, feature] = decodeEntry(reader.nested(), at);
      // defineProperty: a feature named `__proto__` must become a key, not a prototype.
      Object.defineProperty(into, name, { value: feature, enumerable: true, writable: true, configurable: true });
    } else {
      reader.skip(wireType, at);
    }
  }
}

function decodeEntry(reader: WireReader, entryAt: number): [string, Feature] {
  let name = '';
  let feature: Feature | undefined;
  while (!reader.done) {
    const { fieldNumber, wireType, at } = readTag(reader);
    if (fieldNumber === 1 && wireType === WIRE_LENGTH_DELIMITED) {
      try {
        name = utf8.decode(reader.delimited());
      } catch (e) {
        if (e instanceof FormatError) throw e;
        throw reader.error(at, 'feature name is not valid UTF-8');
      }
    } else if (fieldNumber === 2 && wireType === WIRE_LENGTH_DELIMITED) {
      feature = decodeFeature(reader.nested(), feature);
    } else {
      reader.skip(wireType, at);
    }
  }
  if (feature === undefined) {
    throw reader.error(entryAt, `feature '${name}' has no bytes_list, float_list or int64_list`);
  }
  return [name, feature];
}

/** A Feature; a repeated list field of the same kind appends (protobuf merge), another kind replaces. */
function decodeFeature(reader: WireReader, previous: Feature | undefined): Feature | undefined {
  let feature = previous;
  while (!reader.done) {
    const { fieldNumber, wireType, at } = readTag(reader);
    if (wireType !== WIRE_LENGTH_DELIMITED || fieldNumber > 3) {
      reader.skip(wireType, at);
      continue;
    }
    const list = reader.nested();
    if (fieldNumber === 1) {
      const values = feature && 'bytesList' in feature ? [...feature.bytesList] : [];
      feature = { bytesList: decodeBytesList(list, values) };
    } else if (fieldNumber === 2) {
      const values = feature && 'floatList' in feature ? [...feature.floatList] : [];
      feature = { floatList: decodeFloatList(list, values) };
    } else {
      const values = feature && 'int64List' in feature ? [...feature.int64List] : [];
      feature = { int64List: decodeInt64List(list, values) };
    }
  }
  return feature;
}

function decodeBytesList(reader: WireReader, values: Buffer[]): Buffer[] {
  while (!reader.done) {
    const { fieldNumber, wireType, at } = readTag(reader);
    if (fieldNumber === 1 && wireType === WIRE_LENGTH_DELIMITED) values.push(reader.delimited());
    else reader.skip(wireType, at);
  }
  return values;
}

function decodeFloatList(reader: WireReader, values: number[]): number[] {
  while (!reader.done) {
    const { fieldNumber, wireType, at } = readTag(reader);
    if (fieldNumber === 1 && wireType === WIRE_LENGTH_DELIMITED) {
      const packed = reader.nested();
      if ((packed.end - packed.position) % 4 !== 0) {
        throw reader.error(at, `packed float list of ${packed.end - packed.position} bytes is not a multiple of 4`);
      }
      while (!packed.done) values.push(packed.fixed32Float());
    } else if (fieldNumber === 1 && wireType === WIRE_FIXED32) {
      values.push(reader.fixed32Float());
    } else {
      reader.skip(wireType, at);
    }
  }
  return values;
}

function decodeInt64List(reader: WireReader, values: (number | bigint)[]): (number | bigint)[] {
  while (!reader.done) {
    const { fieldNumber, wireType, at } = readTag(reader);
    if (fieldNumber === 1 && wireType === WIRE_LENGTH_DELIMITED) {
      const packed = reader.nested();
      while (!packed.done) values.push(packed.int64());
    } else if (fieldNumber === 1 && wireType === WIRE_VARINT) {
      values.push(reader.int64());
    } else {
      reader.skip(wireType, at);
    }
  }
  return values;
}
