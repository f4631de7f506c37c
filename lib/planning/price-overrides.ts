/**
 * One instance type's price per hour, replacing the table's (e.g. a Savings Plan rate, or another region's).
 */
export interface InstancePrice {
  /** The SageMaker instance type, e.g. `ml.p4d.24xlarge`. */
  readonly instanceType: string;
  /** US dollars per instance-hour. */
  readonly dollarsPerHour: number;
}

/**
 * The price of one FSx for Lustre PERSISTENT_2 throughput tier, replacing the table's.
 */
export interface FsxTierPrice {
  /** MB/s per TiB: 125, 250, 500 or 1000. */
  readonly perUnitStorageThroughput: number;
  /** US dollars per GB-month of storage. */
  readonly dollarsPerGbMonth: number;
}

/**
 * Prices the I/O planner uses instead of its table's (us-east-1 on-demand list prices, in
 * `lib/contract/prices.ts`, each with its pricing page and the date read). Give only what differs:
 * another region, a discount, a price that changed. `training-io plan --prices file.json` reads the
 * same shape from a JSON file.
 *
 * @see https://aws.amazon.com/sagemaker/pricing/
 */
export interface PriceOverrides {
  /**
   * Instance prices per hour.
   *
   * @default - the table's on-demand price of each catalogued instance type
   */
  readonly instances?: InstancePrice[];

  /**
   * FSx for Lustre SCRATCH_2 storage, US dollars per GB-month.
   *
   * @default 0.14
   */
  readonly fsxScratch2DollarsPerGbMonth?: number;

  /**
   * FSx for Lustre PERSISTENT_2 storage per throughput tier.
   *
   * @default - the table's price of each tier
   */
  readonly fsxPersistent2?: FsxTierPrice[];

  /**
   * S3 Standard storage, US dollars per GB-month.
   *
   * @default 0.023
   */
  readonly s3StorageDollarsPerGbMonth?: number;

  /**
   * S3 GET requests, US dollars per 1,000.
   *
   * @default 0.0004
   */
  readonly s3GetDollarsPer1000?: number;

  /**
   * S3 PUT requests, US dollars per 1,000.
   *
   * @default 0.005
   */
  readonly s3PutDollarsPer1000?: number;

  /**
   * S3 LIST requests, US dollars per 1,000.
   *
   * @default 0.005
   */
  readonly s3ListDollarsPer1000?: number;

  /**
   * Lambda duration, US dollars per GB-second.
   *
   * @default 0.0000166667
   */
  readonly lambdaDollarsPerGbSecond?: number;

  /**
   * Lambda requests, US dollars per million.
   *
   * @default 0.2
   */
  readonly lambdaDollarsPerMillionRequests?: number;

  /**
   * Step Functions Standard state transitions (also a Distributed Map's child executions'), US dollars per 1,000.
   *
   * @default 0.025
   */
  readonly stepFunctionsDollarsPer1000Transitions?: number;
}
