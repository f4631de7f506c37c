/**
 * The tf.train.Example of a multi-part sample (lib/contract/sample-parts.ts): the image part in the
 * classification features (`image/encoded`, `image/format`, `image/filename`) and the label in
 * `image/class/label`, as a one-file record holds them, so classification readers read it unchanged;
 * every other part as a one-value bytes feature named by the part; the sample's key in `sample/key`.
 */
import type { Encoded } from './encoded';
import type { Features } from './example';
import { exampleEncoding } from './example';
import { imageFormatOf } from './image-format';
import { delimitedFieldSize, varintSize } from './protobuf-wire';
import type { RecordInput } from './shard-format';
import { FormatError } from './shard-format';
import type { SamplePart } from '../planning/plan-types';
import { SAMPLE_KEY_FEATURE } from '../../../lib/contract/sample-parts';

/** Feature names of the image part and the label, as the one-file record names them (example.ts). */
const IMAGE_FEATURES = { encoded: 'image/encoded', format: 'image/format', filename: 'image/filename', label: 'image/class/label' } as const;

/** The Example of a sample: `input.parts` with their bytes, `input.imagePart` the one in `image/encoded`. */
export function sampleExampleEncoding(input: RecordInput): Encoded {
  const parts = input.parts ?? [];
  const features: Record<string, Features[string]> = { [SAMPLE_KEY_FEATURE]: { bytesList: [Buffer.from(input.key, 'utf8')] } };
  if (input.label !== -1) features[IMAGE_FEATURES.label] = { int64List: [input.label] };
  for (const part of parts) {
    if (part.name === input.imagePart) {
      const filename = `${input.key}.${part.name}`;
      features[IMAGE_FEATURES.encoded] = { bytesList: [part.data] };
      features[IMAGE_FEATURES.filename] = { bytesList: [Buffer.from(filename, 'utf8')] };
      features[IMAGE_FEATURES.format] = { bytesList: [Buffer.from(input.format ?? imageFormatOf(filename), 'utf8')] };
    } else {
      features[part.name] = { bytesList: [part.data] };
    }
  }
  if (input.imagePart !== undefined && !(IMAGE_FEATURES.encoded in features)) {
    throw new FormatError(`${input.key}: sample has no '${input.imagePart}' part, which every sample's record holds in image/encoded`);
  }
  return exampleEncoding(features);
}

/**
 * The most bytes {@link sampleExampleEncoding} takes for a sample with these parts, whatever its label
 * (counted as 2³² − 1) and whichever part is the image: each part counted under the longer of its name
 * and `image/encoded`, plus `image/filename` and an `image/format` of up to 8 bytes.
 */
export function sampleExampleSizeBound(key: string, parts: readonly SamplePart[]): number {
  const keyBytes = Buffer.byteLength(key, 'utf8');
  const labelValue = delimitedFieldSize(delimitedFieldSize(varintSize(2 ** 32 - 1)));
  let longestName = 0;
  for (const part of parts) longestName = Math.max(longestName, Buffer.byteLength(part.name));
  let body = bytesEntry(SAMPLE_KEY_FEATURE.length, keyBytes)
    + delimitedFieldSize(delimitedFieldSize(IMAGE_FEATURES.label.length) + delimitedFieldSize(labelValue))
    + bytesEntry(IMAGE_FEATURES.filename.length, keyBytes + 1 + longestName)
    + bytesEntry(IMAGE_FEATURES.format.length, 8);
  for (const part of parts) body += bytesEntry(Math.max(Buffer.byteLength(part.name), IMAGE_FEATURES.encoded.length), part.size);
  return delimitedFieldSize(body);
}

/** A map entry of Features holding one bytes value, with its field header. */
function bytesEntry(nameBytes: number, valueBytes: number): number {
  return delimitedFieldSize(delimitedFieldSize(nameBytes) + delimitedFieldSize(delimitedFieldSize(delimitedFieldSize(valueBytes))));
}
