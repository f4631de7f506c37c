/**
 * The few pieces of the protobuf wire format that tf.train.Example needs, hand-written so that
 * packing needs no protobuf runtime and an Example is written straight into the output block.
 * See https://protobuf.dev/programming-guides/encoding/.
 */
import { FormatError } from './shard-format';

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LENGTH_DELIMITED = 2;
export const WIRE_FIXED32 = 5;

/** Tag byte of a field; every field number used by Example is below 16, so one byte suffices. */
export function tagByte(fieldNumber: number, wireType: number): number {
  return (fieldNumber << 3) | wireType;
}

/** Bytes of a varint holding a non-negative safe integer. */
export function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    size++;
  }
  return size;
}

/** Bytes of a varint holding a 64-bit unsigned value. */
export function varint64Size(value: bigint): number {
  let size = 1;
  while (value >= 0x80n) {
    value >>= 7n;
    size++;
  }
  return size;
}

/** Bytes of a length-delimited field (tag, length, body) whose body is `bodySize` bytes. */
export function delimitedFieldSize(bodySize: number): number {
  return 1 + varintSize(bodySize) + bodySize;
}

/**
 * Writes protobuf fields into a caller's buffer from `position`: the message's size is computed
 * beforehand (lengths come before bodies), so it is written once, in place.
 */
export class WireWriter {
  constructor(private readonly target: Buffer, public position: number) {}

  byte(value: number): void {
    this.target[this.position++] = value;
  }

  varint(value: number): void {
    while (value >= 0x80) {
      this.target[this.position++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    this.target[this.position++] = value;
  }

  varint64(value: bigint): void {
    while (value >= 0x80n) {
      this.target[this.position++] = Number(value & 0x7fn) | 0x80;
      value >>= 7n;
    }
    this.target[this.position++] = Number(value);
  }

  floatLE(value: number): void {
    this.position = this.target.writeFloatLE(value, this.position);
  }

  bytes(value: Uint8Array): void {
    this.target.set(value, this.position);
    this.position += value.length;
  }

  /** `value` as UTF-8, `byteLength` bytes (`Buffer.byteLength(value)`, which the caller needed for the size). */
  utf8(value: string, byteLength: number): void {
    if (byteLength !== value.length) {
      this.position += this.target.write(value, this.position, byteLength, 'utf8');
      return;
    }
    // As many bytes as characters: all ASCII, copied here (for a file name, a call into
    // Buffer.write costs more than its bytes).
    for (let i = 0; i < value.length; i++) this.target[this.position++] = value.charCodeAt(i);
  }
}

/** Reads protobuf fields from `buffer[start, end)`; errors name the absolute byte offset. */
export class WireReader {
  position: number;

  constructor(readonly buffer: Buffer, start: number, readonly end: number, private readonly what: string) {
    this.position = start;
  }

  get done(): boolean {
    return this.position >= this.end;
  }

  /** A varint that must fit a safe integer (tags, lengths). */
  varint(): number {
    const start = this.position;
    let value = 0;
    let multiplier = 1;
    for (;;) {
      const byte = this.nextByte(start);
      value += (byte & 0x7f) * multiplier;
      if (byte < 0x80) break;
      multiplier *= 0x80;
      if (multiplier > Number.MAX_SAFE_INTEGER) throw this.error(start, 'varint too long');
    }
    return value;
  }

  /**
   * An int64 varint (two's complement: negatives take 10 bytes), as a number when it is a safe
   * integer and as a bigint otherwise.
   */
  int64(): number | bigint {
    const start = this.position;
    let length = 1;
    while (this.nextByte(start) >= 0x80) {
      if (++length > 10) throw this.error(start, 'varint longer than 10 bytes');
    }
    // Up to 7 bytes carry 49 bits: exact in a double, the common case (labels, sizes).
    if (length <= 7) {
      let value = 0;
      for (let i = length - 1; i >= 0; i--) value = value * 0x80 + (this.buffer[start + i] & 0x7f);
      return value;
    }
    let wide = 0n;
    for (let i = length - 1; i >= 0; i--) wide = (wide << 7n) | BigInt(this.buffer[start + i] & 0x7f);
    const signed = BigInt.asIntN(64, wide);
    const asNumber = Number(signed);
    return Number.isSafeInteger(asNumber) ? asNumber : signed;
  }

  /** The body of a length-delimited field, as a view into the buffer. */
  delimited(): Buffer {
    const start = this.delimitedStart();
    return this.buffer.subarray(start, this.position);
  }

  /** A reader over the body of a length-delimited field (an embedded message); moves past it. */
  nested(): WireReader {
    const start = this.delimitedStart();
    return new WireReader(this.buffer, start, this.position, this.what);
  }

  fixed32Float(): number {
    if (this.end - this.position < 4) throw this.error(this.position, 'truncated fixed32');
    const value = this.buffer.readFloatLE(this.position);
    this.position += 4;
    return value;
  }

  /** Skips the body of a field this parser does not use, as protobuf parsers do; `at` is its tag's offset. */
  skip(wireType: number, at: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.int64();
        return;
      case WIRE_FIXED64:
      case WIRE_FIXED32: {
        const size = wireType === WIRE_FIXED64 ? 8 : 4;
        if (this.end - this.position < size) throw this.error(at, 'truncated fixed-size field');
        this.position += size;
        return;
      }
      case WIRE_LENGTH_DELIMITED:
        this.delimited();
        return;
      default:
        throw this.error(at, `unsupported wire type ${wireType}`);
    }
  }

  error(offset: number, what: string): FormatError {
    return new FormatError(`${this.what} at byte ${offset}: ${what}`);
  }

  /** Reads a length and moves past the body; returns where the body starts. */
  private delimitedStart(): number {
    const start = this.position;
    const length = this.varint();
    if (length > this.end - this.position) {
      throw this.error(start, `length ${length} runs past the end of the enclosing message`);
    }
    const bodyStart = this.position;
    this.position += length;
    return bodyStart;
  }

  private nextByte(fieldStart: number): number {
    if (this.position >= this.end) throw this.error(fieldStart, 'truncated varint');
    return this.buffer[this.position++];
  }
}
