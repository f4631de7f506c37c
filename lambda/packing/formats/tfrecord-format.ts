/**
 * Shards of TFRecords, one tf.train.Example per file (see example.ts for the features), indexed for
 * DALI's fn.readers.tfrecord.
 */
import { encodeImageExample } from './example';
import { imageFormatOf } from './image-format';
import { tfrecordIndexLine } from './index-files';
import { EncodedRecord, RecordInput, ShardFormat } from './shard-format';
import { frameTfRecord } from './tfrecord';

/** The TFRecord shard format. */
export const tfrecordFormat: ShardFormat = {
  name: 'tfrecord',
  extension: '.tfrecord',

  encode(input: RecordInput): EncodedRecord {
    const example = encodeImageExample({
      encoded: input.data,
      label: input.label,
      filename: input.key,
      format: imageFormatOf(input.key),
    });
    return frameTfRecord(example.chunks);
  },

  indexLine(_recordId: number, offset: number, size: number): string {
    return tfrecordIndexLine(offset, size);
  },
};
