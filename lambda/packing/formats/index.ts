/** The shard formats: TFRecord and MXNet RecordIO, their building blocks and index files. */
import { recordioFormat } from './recordio-format';
import type { ShardFormat, ShardFormatName } from './shard-format';
import { tfrecordFormat } from './tfrecord-format';

export * from './crc32c';
export * from './encoded';
export * from './example';
export * from './image-format';
export * from './index-files';
export * from './ir-header';
export * from './recordio';
export * from './recordio-format';
export * from './sample-example';
export * from './shard-format';
export * from './shard-record';
export * from './tfrecord';
export * from './tfrecord-format';

/** The format called `name`. */
export function shardFormat(name: ShardFormatName): ShardFormat {
  switch (name) {
    case 'tfrecord':
      return tfrecordFormat;
    case 'recordio':
      return recordioFormat;
    default:
      // Reached only from untyped input (a state machine event, a CLI flag).
      throw new RangeError(`shard format must be 'tfrecord' or 'recordio', got ${JSON.stringify(name)}`);
  }
}
