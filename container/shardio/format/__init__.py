"""The bytes of a shard: TFRecord and MXNet RecordIO records, their CRCs, indexes and tf.train.Example."""
