import type { StackProps} from 'aws-cdk-lib';
import { Size, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import {
  CacheSource, LoggedStateMachine, LustreDatasetCache, ReadRate, ShardedDataset, ShardFormat, TrainingChannel, TrainingContainer, TrainingInstance, TrainingJob,
} from 'cdk-training-io';
import type { Construct } from 'constructs';

/**
 * FSx for Lustre on 2 × ml.p3dn.24xlarge: a large dataset read by many jobs.
 *
 * The small files under an S3 prefix are packed into RecordIO shards; an FSx for Lustre file system
 * linked to the shards imports them once (and every shard written later, automatically), and each
 * training job reads them in File mode at the file system's throughput instead of downloading them.
 */
export class FsxCacheStack extends Stack {
  public readonly dataset: ShardedDataset;
  public readonly cache: LustreDatasetCache;
  public readonly job: TrainingJob;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const raw = s3.Bucket.fromBucketName(this, 'Raw', 'example-raw-images');
    // Training and the file system share private subnets with no route to the internet.
    const vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'training', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 20 }],
      gatewayEndpoints: { S3: { service: ec2.GatewayVpcEndpointAwsService.S3 } },
      flowLogs: { rejected: { trafficType: ec2.FlowLogTrafficType.REJECT } },
    });

    const instanceCount = 2;
    const instance = TrainingInstance.P3DN_24XLARGE;     // 96 vCPUs, 8 × V100, 1.8 TB NVMe, 100 Gbps
    this.dataset = new ShardedDataset(this, 'ImageNet', {
      sourceBucket: raw,
      sourcePrefix: 'imagenet/train/',
      format: ShardFormat.RECORDIO,
      cluster: { instance, instanceCount },
    });

    this.cache = new LustreDatasetCache(this, 'Cache', {
      vpc,
      source: CacheSource.fromShards(this.dataset),
      datasetSize: Size.gibibytes(150),
      // 2 × 8 V100 at about 1000 images/s each, JPEGs of about 110 KiB: 1.8 GB/s.
      readRate: ReadRate.forTraining({
        instance, instanceCount, samplesPerSecondPerDevice: 1000, sampleSize: Size.kibibytes(110),
      }),
    });

    this.job = new TrainingJob(this, 'Train', {
      instance,
      instanceCount,
      container: TrainingContainer.pytorch(),
      channels: [
        // The cache links the dataset's root at /dataset: the reader follows its manifest to the current version.
        TrainingChannel.fromDatasetCache('train', this.cache, 'dataset'),
        TrainingChannel.fromDatasetCache('index', this.cache, 'dataset'),
      ],
      hyperparameters: { epochs: '90' },
    });

    // Traced, its events logged for a year, cdk-nag's finding on X-Ray's unscoped actions acknowledged.
    new LoggedStateMachine(this, 'Training', { definitionBody: sfn.DefinitionBody.fromChainable(this.job) });
  }
}
