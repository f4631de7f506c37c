import * as fs from 'node:fs';
import * as path from 'node:path';
import { readTfRecords } from '../../lambda/packing/formats/tfrecord';
import type { Manifest } from '../../lambda/packing/manifest';
import type { ParsedFeature } from './tf-example-parser';
import { parseTfExample } from './tf-example-parser';

const IMAGES = path.join(__dirname, '..', 'fixtures', 'images');

/** A JPEG, a PNG mask and JSON annotations: one sample's files (image fixtures of test/fixtures/images/). */
export const SAMPLE_PARTS = {
  jpg: fs.readFileSync(path.join(IMAGES, 'red-40x30.jpg')),
  png: fs.readFileSync(path.join(IMAGES, 'preprocess', 'pillow-palette.png')),
  json: (key: string) => Buffer.from(JSON.stringify({ key, boxes: [[1, 2, 30, 20]] })),
};

/** `<class>/<key>.jpg`, `.json` and `.mask.png` for each key: complete samples, WebDataset's naming. */
export function sampleFiles(keys: readonly string[]): Record<string, Buffer> {
  const files: Record<string, Buffer> = {};
  for (const key of keys) {
    files[`${key}.jpg`] = SAMPLE_PARTS.jpg;
    files[`${key}.json`] = SAMPLE_PARTS.json(key);
    files[`${key}.mask.png`] = SAMPLE_PARTS.png;
  }
  return files;
}

/** Every record of a version's shards, each decoded by the independent parser (protobufjs with TensorFlow's schema). */
export function parsedRecords(manifest: Manifest, readObject: (key: string) => Buffer): Array<Record<string, ParsedFeature>> {
  return manifest.shards.flatMap((shard) => [...readTfRecords(readObject(shard.key))].map((record) => parseTfExample(record.payload)));
}

/** A one-value bytes feature's value, as UTF-8 text when asked. */
export function bytesOf(feature: ParsedFeature | undefined): Buffer {
  const values = feature?.bytesList?.value ?? [];
  if (values.length !== 1) throw new Error(`expected one bytes value, got ${values.length}`);
  return Buffer.from(values[0]);
}
