import { ArnFormat, Stack, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { acknowledge, wildcardResourceFinding } from '../../private/nag';

/**
 * The execution role SageMaker assumes: logs and metrics of training jobs, and the network
 * interfaces of a VPC job. Data access (channels, output, code, image) is granted by each part.
 */
export function createExecutionRole(scope: Construct): iam.Role {
  const stack = Stack.of(scope);
  const role = new iam.Role(scope, 'ExecutionRole', {
    assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com'),
    description: `SageMaker training jobs of ${scope.node.path}`,
  });
  const logGroup = stack.formatArn({
    service: 'logs', resource: 'log-group', resourceName: '/aws/sagemaker/TrainingJobs:*', arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
  role.addToPrincipalPolicy(new iam.PolicyStatement({
    actions: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
    resources: [logGroup],
  }));
  acknowledge(role, wildcardResourceFinding(role, logGroup),
    'SageMaker writes one log stream per job and instance into /aws/sagemaker/TrainingJobs; the streams are named at run time');
  role.addToPrincipalPolicy(new iam.PolicyStatement({
    actions: ['cloudwatch:PutMetricData'],
    resources: ['*'],
    conditions: { StringLike: { 'cloudwatch:namespace': '/aws/sagemaker/*' } },
  }));
  role.addToPrincipalPolicy(new iam.PolicyStatement({
    actions: [
      'ec2:CreateNetworkInterface', 'ec2:CreateNetworkInterfacePermission', 'ec2:DeleteNetworkInterface',
      'ec2:DeleteNetworkInterfacePermission', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeVpcs',
      'ec2:DescribeDhcpOptions', 'ec2:DescribeSubnets', 'ec2:DescribeSecurityGroups',
    ],
    resources: ['*'],
  }));
  acknowledge(role, 'AwsSolutions-IAM5[Resource::*]',
    'cloudwatch:PutMetricData has no resource type (scoped by the cloudwatch:namespace condition instead); ' +
    'the ec2 Describe* calls SageMaker makes to attach a VPC job have no resource-level permissions, the ' +
    'network interfaces it creates do not exist before the job, and ecr:GetAuthorizationToken applies to no resource');
  return role;
}

/** What the Step Functions task needs to run a training job. */
export interface OrchestrationOptions {
  readonly role: iam.IRole;
  readonly jobNamePrefix: string;
  readonly tagged: boolean;
  readonly sync: boolean;
}

/**
 * The state machine role's statements for `createTrainingJob(.sync)`, scoped to this job's names
 * (as aws-cdk-lib's SageMakerCreateTrainingJob does, plus the name prefix).
 */
export function orchestrationPolicies(scope: Construct, options: OrchestrationOptions): iam.PolicyStatement[] {
  const stack = Stack.of(scope);
  const jobs = trainingJobArnPattern(scope, options.jobNamePrefix);
  const statements = [
    new iam.PolicyStatement({
      actions: ['sagemaker:CreateTrainingJob', 'sagemaker:DescribeTrainingJob', 'sagemaker:StopTrainingJob', 'sagemaker:ListTags'],
      resources: [jobs],
    }),
    new iam.PolicyStatement({
      actions: ['iam:PassRole'],
      resources: [options.role.roleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'sagemaker.amazonaws.com' } },
    }),
  ];
  // The policy goes to the state machine's role, outside this construct: accept the finding for this exact pattern.
  acknowledge(stack, wildcardResourceFinding(scope, jobs),
    `every run creates a new training job named ${options.jobNamePrefix}-<uuid>; the pattern covers only this task's jobs`);
  if (options.tagged) {
    statements.push(new iam.PolicyStatement({ actions: ['sagemaker:AddTags'], resources: [jobs] }));
  }
  if (options.sync) {
    statements.push(new iam.PolicyStatement({
      actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
      resources: [stack.formatArn({ service: 'events', resource: 'rule', resourceName: 'StepFunctionsGetEventsForSageMakerTrainingJobsRule' })],
    }));
  }
  return statements;
}

/** The ARNs of the training jobs named `<prefix>-…`, as IAM sees them. */
export function trainingJobArnPattern(scope: Construct, jobNamePrefix: string): string {
  // SageMaker lower-cases resource names in its ARNs.
  // Lower-casing a token would corrupt its marker: a prefix known only at deploy time is used as it is.
  const prefix = Token.isUnresolved(jobNamePrefix) ? jobNamePrefix : jobNamePrefix.toLowerCase();
  return Stack.of(scope).formatArn({ service: 'sagemaker', resource: 'training-job', resourceName: `${prefix}-*` });
}
