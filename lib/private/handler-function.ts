import type { Size } from 'aws-cdk-lib';
import { Duration } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import type { LambdaHandlerName } from './assets';
import { HANDLER_TIMEOUT_SECONDS } from '../contract/handler-timeout';
import { LIBRARY_METRICS_NAMESPACE } from '../contract/metric-names';
import { lambdaBundleDirectory } from './assets';
import type { LogGroupOptions } from './log-group';
import { createLogGroup } from './log-group';
import { acknowledge } from './nag';

/** What differs between the library's Lambda functions. */
export interface HandlerFunctionOptions {
  readonly memorySize: Size;
  readonly environment: Record<string, string>;
  /** What the function does, after `cdk-training-io <handler>: `. */
  readonly description: string;
  /** @default - HANDLER_TIMEOUT_SECONDS, 15 minutes */
  readonly timeout?: Duration;
  /** Retention and key of the function's log group. */
  readonly logs?: LogGroupOptions;
  /** @default - not in a VPC */
  readonly vpc?: ec2.IVpc;
  /** @default - the VPC's private subnets */
  readonly vpcSubnets?: ec2.SubnetSelection;
}

/**
 * One of the library's Lambda functions, from its bundle: Node.js 22 on x86_64, traced, with its
 * own log group (a year unless told otherwise), in the VPC when given, Powertools service name and metrics namespace set, and the
 * cdk-nag findings of that setup accepted.
 */
export function createHandlerFunction(scope: Construct, id: string, handler: LambdaHandlerName, options: HandlerFunctionOptions): lambda.Function {
  const fn = new lambda.Function(scope, id, {
    description: `cdk-training-io ${handler}: ${options.description}`,
    runtime: lambda.Runtime.NODEJS_22_X,
    // x86_64: the packers checksum every byte with @node-rs/crc32's SSE4.2 native addon, shipped as its linux-x64-gnu binary.
    architecture: lambda.Architecture.X86_64,
    code: lambda.Code.fromAsset(lambdaBundleDirectory(handler)),
    handler: 'index.handler',
    memorySize: options.memorySize.toMebibytes(),
    timeout: options.timeout ?? Duration.seconds(HANDLER_TIMEOUT_SECONDS),
    tracing: lambda.Tracing.ACTIVE,
    environment: {
      ...options.environment,
      POWERTOOLS_SERVICE_NAME: handler,
      POWERTOOLS_METRICS_NAMESPACE: LIBRARY_METRICS_NAMESPACE,
    },
    logGroup: createLogGroup(scope, `${id}Logs`, options.logs),
    vpc: options.vpc,
    vpcSubnets: options.vpc ? options.vpcSubnets : undefined,
  });
  if (options.vpc) {
    acknowledge(fn, 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
      'the Lambda VPC access policy only manages the function\'s own network interfaces');
  }
  acknowledge(fn, 'AwsSolutions-L1', 'the handlers are bundled and tested for Node.js 22 (nodejs22.x, supported until 2027)');
  acknowledge(fn, 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    'the Lambda basic execution policy only writes the function\'s own CloudWatch logs');
  acknowledge(fn, 'AwsSolutions-IAM5[Resource::*]', 'X-Ray tracing (xray:PutTraceSegments, xray:PutTelemetryRecords) has no resource-level permissions');
  return fn;
}

