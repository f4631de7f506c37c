import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { SFNClient } from '@aws-sdk/client-sfn';
import type { S3ClientFlags } from './dataset-location';
import { timeoutHandlerOptions } from '../../lambda/io/s3-timeouts';
import { UsageError } from './usage-error';

/**
 * The SageMaker, CloudWatch and Step Functions clients of a command: region from `--region`, else
 * AWS_REGION / AWS_DEFAULT_REGION; credentials from the SDK's default provider chain;
 * `--endpoint-url` for every service (a test double or a private endpoint); the engine's timeouts
 * (connect 3 s, 10 s without a byte), which the SDK has none of, so an endpoint that never answers
 * fails the command (after the SDK's own retries) rather than hanging it. The flags were checked
 * when the command's arguments were parsed (parseCommandArgs).
 */
export function createAwsClients(flags: S3ClientFlags, env: NodeJS.ProcessEnv = process.env) {
  const region = flags.region ?? (env.AWS_REGION || undefined) ?? (env.AWS_DEFAULT_REGION || undefined);
  if (!region) throw new UsageError('the AWS calls need a region: pass --region (e.g. --region us-east-1) or set AWS_REGION');
  const config = { region, requestHandler: timeoutHandlerOptions(), ...(flags.endpointUrl !== undefined ? { endpoint: flags.endpointUrl } : {}) };
  return {
    sagemaker: new SageMakerClient(config),
    cloudwatch: new CloudWatchClient(config),
    sfn: new SFNClient(config),
  };
}

/** An error an AWS service answered with (the SDK's ServiceException): shown as the service's message. */
export function isAwsServiceError(error: unknown): error is Error & { $metadata: unknown } {
  return error instanceof Error && '$metadata' in error;
}
