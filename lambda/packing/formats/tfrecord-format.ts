/**
 * Shards of TFRecords, one tf.train.Example per file or multi-part sample (see example.ts and
 * sample-example.ts for the features), indexed for
 * DALI's fn.readers.tfrecord.
 */
import type { Encoded } from './encoded';
import { imageExampleEncoding, imageExampleSizeBound } from './example';
import { imageFormatOf } from './image-format';
import { tfrecordIndexLine } from './index-files';
import type { RecordInput, ShardFormat } from './shard-format';
import { sampleExampleEncoding, sampleExampleSizeBound } from './sample-example';
import type { SamplePart } from '../planning/plan-types';
import { frameTfRecord, TFRECORD_OVERHEAD } from './tfrecord';

/** The TFRecord shard format. */
export const tfrecordFormat: ShardFormat = {
  name: 'tfrecord',
  extension: '.tfrecord',

  encode(input: RecordInput): Encoded {
    if (input.parts) return frameTfRecord(sampleExampleEncoding(input));
    return frameTfRecord(imageExampleEncoding({
      encoded: input.data,
      label: input.label,
      filename: input.key,
      format: input.format ?? imageFormatOf(input.key),
    }));
  },

  recordBytes(key: string, size: number, parts?: readonly SamplePart[]): number {
    if (parts) return TFRECORD_OVERHEAD + sampleExampleSizeBound(key, parts);
    return TFRECORD_OVERHEAD + imageExampleSizeBound(key, imageFormatOf(key), size);
  },

  indexLine(_recordId: number, offset: number, size: number): string {
    return tfrecordIndexLine(offset, size);
  },
};
