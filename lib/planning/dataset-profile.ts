import type { Size } from 'aws-cdk-lib';

/**
 * How the objects of a dataset hold their samples.
 */
export enum DatasetFormat {
  /** One sample per object, e.g. one JPEG per image (`cat/0001.jpg`). */
  FILES = 'files',
  /** TFRecord shards of many records each. */
  TFRECORD = 'tfrecord',
  /** MXNet RecordIO shards of many records each. */
  RECORDIO = 'recordio',
}

/**
 * What the samples are, for the decoding advice.
 */
export enum SampleEncoding {
  /** JPEG images: decoded (and augmented) on the CPU, or on the GPU with NVIDIA DALI. */
  JPEG = 'jpeg',
  /** Anything else (tokens, tensors, audio, ...): no GPU decoding advice. */
  OTHER = 'other',
}

/**
 * The dataset as it lies in S3: how many objects, how large, in what format.
 */
export interface DatasetProfile {
  /** Objects under the prefix (files, or shards for a packed dataset). */
  readonly objectCount: number;

  /**
   * Total size of the objects. Give this or `meanObjectSize`.
   *
   * @default - `objectCount` × `meanObjectSize`
   */
  readonly totalSize?: Size;

  /**
   * Mean size of one object. Give this or `totalSize`.
   *
   * @default - `totalSize` ÷ `objectCount`
   */
  readonly meanObjectSize?: Size;

  /**
   * How the objects hold the samples.
   *
   * @default DatasetFormat.FILES
   */
  readonly format?: DatasetFormat;

  /**
   * Samples (records) in the dataset: needed with `samplesPerSecondPerDevice` for a packed dataset,
   * whose objects are shards.
   *
   * @default - `objectCount` for FILES (one sample per object); unknown for packed formats
   */
  readonly recordCount?: number;

  /**
   * What the samples are.
   *
   * @default SampleEncoding.JPEG
   */
  readonly sampleEncoding?: SampleEncoding;
}
