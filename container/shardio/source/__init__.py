"""Where records are read from: a folder of shards, an S3 prefix (cached), a SageMaker channel."""
