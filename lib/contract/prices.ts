// The one table of AWS list prices the library reasons with (issue #44): the planner's dollars per
// job and per month (lib/planning/), and the README's scenario costs (checked equal by
// test/planning/prices-table.test.ts). us-east-1 (N. Virginia), on-demand, in US dollars. Other
// regions differ: most list the same S3 request, Lambda and Step Functions prices, while instance
// hours and FSx storage are 5–30 % higher in most other regions (each pricing page has a region
// selector). Every figure can be overridden (`training-io plan --prices file.json`, `prices` in
// `IoPlanProps` and `TrainingPipelineProps`): prices change, and accounts have discounts.

/** When the figures below were read (or, for estimates, derived). */
export const PRICES_READ = '2026-12-02';

/** The region the figures are for. */
export const PRICES_REGION = 'us-east-1';

/** A price with where it comes from. */
export interface PriceFigure {
  /** US dollars per `unit`. */
  readonly dollars: number;
  readonly unit: string;
  /** The AWS pricing page. */
  readonly source: string;
  /**
   * `published`: read on the page (or in AWS's own pages quoting it) on PRICES_READ; `estimate`: not
   * found published, derived as `derivation` says.
   */
  readonly basis: 'published' | 'estimate';
  readonly derivation?: string;
}

const SAGEMAKER_PAGE = 'https://aws.amazon.com/sagemaker/pricing/ (Training, On-Demand)';
const FSX_PAGE = 'https://aws.amazon.com/fsx/lustre/pricing/';
const S3_PAGE = 'https://aws.amazon.com/s3/pricing/';
const LAMBDA_PAGE = 'https://aws.amazon.com/lambda/pricing/';
const SFN_PAGE = 'https://aws.amazon.com/step-functions/pricing/';

function published(dollars: number, unit: string, source: string): PriceFigure {
  return { dollars, unit, source, basis: 'published' };
}

function estimate(dollars: number, unit: string, source: string, derivation: string): PriceFigure {
  return { dollars, unit, source, basis: 'estimate', derivation };
}

/**
 * SageMaker's markup over EC2 on-demand for the same instance, used where the SageMaker training price
 * was not found: ml.g5.2xlarge $1.515 ÷ EC2 g5.2xlarge $1.212 = 1.25 (ml.p4d.24xlarge $37.688 ÷ EC2
 * $32.7726 = 1.15 before EC2's 2025 P4/P5 price cut).
 */
const SAGEMAKER_MARKUP = 1.25;

/**
 * SageMaker's training pricing table is rendered by a script on its page and could not be read
 * here: ml.p4d.24xlarge's $37.688 was found quoted from it; the other figures listed as estimates
 * are the SageMaker training prices as this project last knew them (the page's 2024 table), or EC2's
 * on-demand price × SAGEMAKER_MARKUP where a type is newer. Check them before committing money.
 */
function recalled(dollars: number): PriceFigure {
  return estimate(dollars, 'instance-hour', SAGEMAKER_PAGE,
    'the SageMaker training price as last read from the page (2024), not re-read: the table is rendered by script');
}

function fromEc2(ec2Dollars: number): PriceFigure {
  return estimate(Math.round(ec2Dollars * SAGEMAKER_MARKUP * 1000) / 1000, 'instance-hour', SAGEMAKER_PAGE,
    `EC2 on-demand $${ec2Dollars} × ${SAGEMAKER_MARKUP} (SageMaker's markup on g5.2xlarge); no SageMaker figure found`);
}

/**
 * On-demand $/hour of each SageMaker training instance in the catalog (`TrainingInstance.all()`; a test
 * checks that none is missing). Managed spot training (`useSpotInstances`) may bill up to 90 % less,
 * as capacity allows and with interruptions: a discount a job may get, never assumed here.
 */
export const INSTANCE_HOURLY: Readonly<Record<string, PriceFigure>> = {
  'ml.p3.2xlarge': recalled(3.825),
  'ml.p3.8xlarge': recalled(14.688),
  'ml.p3.16xlarge': recalled(28.152),
  'ml.p3dn.24xlarge': recalled(35.894),
  'ml.p4d.24xlarge': { ...published(37.688, 'instance-hour', SAGEMAKER_PAGE),
    derivation: 'quoted from the SageMaker pricing page (gist LiutongZhou/552cf384, "Hourly Price")' },
  'ml.p4de.24xlarge': estimate(47.11, 'instance-hour', SAGEMAKER_PAGE, 'ml.p4d.24xlarge × 1.25, EC2\'s p4de/p4d ratio'),
  'ml.p5.4xlarge': estimate(14.133, 'instance-hour', SAGEMAKER_PAGE, 'ml.p5.48xlarge ÷ 8 (one of its eight H100s)'),
  'ml.p5.48xlarge': recalled(113.068),
  'ml.p5e.48xlarge': estimate(124.375, 'instance-hour', SAGEMAKER_PAGE, 'ml.p5.48xlarge + 10 % (H200 for H100); no figure found'),
  'ml.p5en.48xlarge': estimate(124.375, 'instance-hour', SAGEMAKER_PAGE, 'ml.p5.48xlarge + 10 % (H200 for H100); no figure found'),
  'ml.g4dn.xlarge': recalled(0.736),
  'ml.g4dn.2xlarge': recalled(1.053),
  'ml.g4dn.4xlarge': recalled(1.686),
  'ml.g4dn.8xlarge': recalled(3.046),
  'ml.g4dn.12xlarge': recalled(5.477),
  'ml.g4dn.16xlarge': recalled(6.093),
  'ml.g5.xlarge': recalled(1.408),
  'ml.g5.2xlarge': recalled(1.515),
  'ml.g5.4xlarge': recalled(2.03),
  'ml.g5.8xlarge': recalled(3.06),
  'ml.g5.12xlarge': recalled(7.09),
  'ml.g5.16xlarge': recalled(5.12),
  'ml.g5.24xlarge': recalled(10.18),
  'ml.g5.48xlarge': recalled(20.36),
  'ml.g6.xlarge': fromEc2(0.8048),
  'ml.g6.2xlarge': fromEc2(0.9776),
  'ml.g6.4xlarge': fromEc2(1.3232),
  'ml.g6.8xlarge': fromEc2(2.0144),
  'ml.g6.12xlarge': fromEc2(4.6016),
  'ml.g6.16xlarge': fromEc2(3.3968),
  'ml.g6.24xlarge': fromEc2(6.6752),
  'ml.g6.48xlarge': fromEc2(13.3504),
  'ml.g6e.xlarge': fromEc2(1.861),
  'ml.g6e.2xlarge': fromEc2(2.24208),
  'ml.g6e.4xlarge': fromEc2(3.00424),
  'ml.g6e.8xlarge': fromEc2(4.52856),
  'ml.g6e.12xlarge': fromEc2(10.49264),
  'ml.g6e.16xlarge': fromEc2(7.57719),
  'ml.g6e.24xlarge': fromEc2(15.06559),
  'ml.g6e.48xlarge': fromEc2(30.13118),
  'ml.trn1.2xlarge': fromEc2(1.34375),
  'ml.trn1.32xlarge': fromEc2(21.5),
  'ml.trn1n.32xlarge': fromEc2(24.78),
  'ml.trn2.48xlarge': estimate(53.75, 'instance-hour', SAGEMAKER_PAGE, 'twice the ml.trn1.32xlarge estimate (trn2: 16 Trainium2); no figure found'),
};

/** FSx for Lustre SCRATCH_2 SSD storage, per GB-month (the capacity provisioned, prorated by the second). */
export const FSX_SCRATCH_2_GB_MONTH: PriceFigure = { ...published(0.14, 'GB-month', FSX_PAGE),
  derivation: 'the page\'s pricing example 1 (a 1.2 TB scratch file system, $140/TB-month)' };

/** FSx for Lustre PERSISTENT_2 SSD storage per GB-month, by `PerUnitStorageThroughput` (MB/s/TiB). */
export const FSX_PERSISTENT_2_GB_MONTH: Readonly<Record<number, PriceFigure>> = {
  125: published(0.145, 'GB-month', FSX_PAGE),
  250: estimate(0.21, 'GB-month', FSX_PAGE, 'as last read from the page (2024), not re-read'),
  500: estimate(0.34, 'GB-month', FSX_PAGE, 'as last read from the page (2024), not re-read'),
  1000: published(0.6, 'GB-month', FSX_PAGE),
};

/** S3 Standard storage, first 50 TB a month. */
export const S3_STANDARD_GB_MONTH: PriceFigure = published(0.023, 'GB-month', S3_PAGE);
/** S3 Standard GET (and SELECT) requests. */
export const S3_GET_PER_1000: PriceFigure = published(0.0004, '1,000 requests', S3_PAGE);
/** S3 Standard PUT, COPY, POST and LIST requests: the same price for each. */
export const S3_PUT_PER_1000: PriceFigure = published(0.005, '1,000 requests', S3_PAGE);
export const S3_LIST_PER_1000: PriceFigure = published(0.005, '1,000 requests', S3_PAGE);

/** Lambda duration on x86, first 6 billion GB-seconds a month (the packers run on x86). */
export const LAMBDA_GB_SECOND: PriceFigure = published(0.0000166667, 'GB-second', LAMBDA_PAGE);
/** Lambda requests. */
export const LAMBDA_PER_MILLION_REQUESTS: PriceFigure = published(0.2, 'million requests', LAMBDA_PAGE);

/**
 * Step Functions Standard state transitions. A Distributed Map's child workflow executions of
 * Standard type are billed the same way, per state transition they make (ShardedDataset's
 * packers run as such children): there is no other charge per child execution.
 */
export const SFN_PER_1000_TRANSITIONS: PriceFigure = published(0.025, '1,000 state transitions', SFN_PAGE);

/** An interface VPC endpoint, per AZ-hour (the `regulated` scenario's three endpoints in two AZs). */
export const INTERFACE_ENDPOINT_AZ_HOUR: PriceFigure = published(0.01, 'endpoint-AZ-hour', 'https://aws.amazon.com/privatelink/pricing/');
/** A CloudWatch dashboard per month, beyond an account's three free. */
export const CLOUDWATCH_DASHBOARD_MONTH: PriceFigure = published(3, 'dashboard-month', 'https://aws.amazon.com/cloudwatch/pricing/');
/** A customer managed KMS key per month. */
export const KMS_KEY_MONTH: PriceFigure = published(1, 'key-month', 'https://aws.amazon.com/kms/pricing/');

/** Hours in the month the pricing pages prorate by (730 = 8,760 ÷ 12). */
export const HOURS_PER_MONTH = 730;
