import * as path from 'node:path';
import * as protobuf from 'protobufjs';

/** One decoded feature, as protobufjs gives it from TensorFlow's schema. */
export interface ParsedFeature {
  readonly bytesList?: { readonly value: Buffer[] };
  readonly floatList?: { readonly value: number[] };
  readonly int64List?: { readonly value: Array<number | { toNumber(): number }> };
}

let exampleType: protobuf.Type | undefined;

/**
 * Decodes a tf.train.Example with protobufjs and TensorFlow's example.proto and feature.proto
 * (test/fixtures/protobuf/): an independent parser, sharing no code with the packer's encoder.
 */
export function parseTfExample(payload: Uint8Array): Record<string, ParsedFeature> {
  exampleType ??= protobuf.loadSync(path.join(__dirname, '..', 'fixtures', 'protobuf', 'example.proto')).lookupType('tensorflow.Example');
  const message = exampleType.toObject(exampleType.decode(payload), { defaults: false }) as { features?: { feature?: Record<string, ParsedFeature> } };
  return message.features?.feature ?? {};
}
