import type { Duration } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { createLogGroup } from '../private/log-group';
import { acknowledge } from '../private/nag';

/**
 * Properties of a {@link LoggedStateMachine}.
 */
export interface LoggedStateMachineProps {
  /** The steps, e.g. `sfn.DefinitionBody.fromChainable(trainingJob)`. */
  readonly definitionBody: sfn.DefinitionBody;

  /**
   * How long the execution log events are kept.
   *
   * @default logs.RetentionDays.ONE_YEAR
   */
  readonly logRetention?: logs.RetentionDays;

  /**
   * KMS key of the execution log group (its key policy gets the statement CloudWatch Logs needs
   * when the key is of this app; an imported key's policy must allow `logs.<region>.amazonaws.com`).
   *
   * @default - CloudWatch Logs' own encryption
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * Actions of the state machine's role, besides X-Ray's and CloudWatch Logs delivery's, that have no
   * resource-level permissions, e.g. `fsx:DescribeDataRepositoryTasks`: named in the reason the
   * `AwsSolutions-IAM5[Resource::*]` finding is acknowledged with.
   *
   * @default - none
   */
  readonly otherUnscopedActions?: string[];

  /**
   * The state machine's name.
   *
   * @default - a name CloudFormation generates
   */
  readonly stateMachineName?: string;

  /**
   * The longest an execution may run.
   *
   * @default - no timeout
   */
  readonly timeout?: Duration;

  /**
   * The state machine's execution role.
   *
   * @default - a role created for it
   */
  readonly role?: iam.IRole;
}

/**
 * A Step Functions state machine as the library builds its own: traced with X-Ray, every event
 * logged (without execution data, which may hold dataset keys) to a log group `<id>Logs` beside it
 * (a year by default), and the cdk-nag finding of X-Ray's and CloudWatch Logs delivery's unscoped
 * actions acknowledged with its reason, so AwsSolutionsChecks passes.
 */
export class LoggedStateMachine extends sfn.StateMachine {
  /** The log group of the executions' events. */
  public readonly logGroup: logs.ILogGroup;

  constructor(scope: Construct, id: string, props: LoggedStateMachineProps) {
    const logGroup = createLogGroup(scope, `${id}Logs`, { retention: props.logRetention, encryptionKey: props.encryptionKey });
    super(scope, id, {
      definitionBody: props.definitionBody,
      stateMachineName: props.stateMachineName,
      timeout: props.timeout,
      role: props.role,
      tracingEnabled: true,
      logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: false },
    });
    this.logGroup = logGroup;
    const others = props.otherUnscopedActions?.length ? ` and ${props.otherUnscopedActions.join(', ')}` : '';
    acknowledge(this, 'AwsSolutions-IAM5[Resource::*]',
      `X-Ray tracing and CloudWatch Logs delivery APIs (xray:PutTraceSegments, logs:CreateLogDelivery, ...)${others} have no resource-level permissions`);
  }
}
