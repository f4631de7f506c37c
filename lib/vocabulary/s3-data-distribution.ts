/**
 * How objects of an S3 channel are spread over the instances of a job.
 */
export enum S3DataDistribution {
  /** Every instance gets every object. */
  FULLY_REPLICATED = 'FullyReplicated',
  /** Each of N instances gets about 1/N of the objects (by count, not bytes): shards must be equal-sized. */
  SHARDED_BY_S3_KEY = 'ShardedByS3Key',
}
