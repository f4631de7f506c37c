// The names a packing run is configured with, as the handlers' environment, the CLI's flags and the
// manifest spell them. The constructs' enums (lib/vocabulary/) carry the same values for jsii users;
// test/contract/record-vocabulary.test.ts holds the two to each other.

/** The shard formats: TFRecord of tf.train.Example, or MXNet RecordIO. */
export const SHARD_FORMAT_NAMES = ['tfrecord', 'recordio'] as const;
/** A shard format's name. */
export type ShardFormatName = (typeof SHARD_FORMAT_NAMES)[number];
/** The format when none is given. */
export const DEFAULT_SHARD_FORMAT: ShardFormatName = 'tfrecord';

/**
 * Where labels come from: the first folder of each key (sorted class names → 0..n-1), a label file
 * beside the data mapping each sample key to its class (lib/contract/label-file.ts; the same numbering), or none (-1).
 */
export const LABEL_MODES = ['folder', 'none', 'file'] as const;
/** How files become labelled records. */
export type LabelMode = (typeof LABEL_MODES)[number];
/** The labelling when none is given. */
export const DEFAULT_LABEL_MODE: LabelMode = 'folder';

/**
 * What the records hold: `images`, each file checked at pack time so that none the training
 * readers cannot decode becomes a record, or `any` bytes, packed as they are.
 */
export const RECORD_CONTENTS = ['images', 'any'] as const;
/** What the records hold. */
export type RecordContent = (typeof RECORD_CONTENTS)[number];

/**
 * The default content: images with labels, from folders or a label file (a class per sample: an image
 * classification set), any bytes without labels.
 */
export function defaultRecordContent(labels: LabelMode | undefined): RecordContent {
  return (labels ?? DEFAULT_LABEL_MODE) === 'none' ? 'any' : 'images';
}

/** Whether `value` is one of `names`, narrowing it to their union. */
export function isOneOf<T extends string>(names: readonly T[], value: unknown): value is T {
  return (names as readonly unknown[]).includes(value);
}
