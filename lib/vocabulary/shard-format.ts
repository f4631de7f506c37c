/**
 * The record format of the shards.
 */
export enum ShardFormat {
  /** TFRecord of tf.train.Example (`image/encoded`, `image/class/label`, ...): `.tfrecord` shards, one index per shard. */
  TFRECORD = 'tfrecord',
  /** MXNet RecordIO (im2rec-compatible IRHeader): `.rec` shards, plus `index/all.idx` over all shards for DALI. */
  RECORDIO = 'recordio',
}
