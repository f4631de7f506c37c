import type { AppProps } from 'aws-cdk-lib';
import { App, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { DISABLE_ASSET_STAGING_CONTEXT } from 'aws-cdk-lib/cx-api';
import { TrainingContainer } from '../../lib/training/training-container';

/** An image in a private ECR repository: keeps job tests independent of the DLC registry lookup. */
export const TEST_IMAGE_URI = '123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1';

/** The container most job tests use. */
export function testContainer(): TrainingContainer {
  return TrainingContainer.fromImageUri(TEST_IMAGE_URI);
}

/**
 * An App for the suites that read templates, not staged files: each asset is still fingerprinted (the
 * template names the same hashes), but not copied into every synthesis's temporary cloud assembly,
 * 28 MB of handler bundles for each stack with a ShardedDataset, about half of such a synthesis's time.
 * The suites that check staged files (examples, the training code's tarball, the package) stage them.
 */
export function testApp(props: AppProps = {}): App {
  return new App({ ...props, context: { [DISABLE_ASSET_STAGING_CONTEXT]: true, ...props.context } });
}

/** What a test needs to build a training job: a stack in a concrete environment and a data bucket. */
export interface TrainingTestStack {
  readonly app: App;
  readonly stack: Stack;
  readonly bucket: s3.Bucket;
}

/** A stack in us-east-1 with a data bucket. */
export function trainingTestStack(): TrainingTestStack {
  const app = testApp();
  const stack = new Stack(app, 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
  const bucket = new s3.Bucket(stack, 'Data');
  return { app, stack, bucket };
}

/** A VPC of the kind users bring: public subnets (with NAT) and private subnets, in 2 AZs. */
export function vpcWithPublicSubnets(stack: Stack, id = 'UserVpc'): ec2.Vpc {
  return new ec2.Vpc(stack, id, {
    maxAzs: 2,
    natGateways: 1,
    subnetConfiguration: [
      { name: 'public', subnetType: ec2.SubnetType.PUBLIC },
      { name: 'private', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
    ],
  });
}
