import type { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
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
 * The actions aws-cdk-lib's StateMachine grants its role on `*` for X-Ray tracing and CloudWatch Logs
 * delivery: none of them has resource-level permissions.
 */
const TRACING_AND_LOG_DELIVERY_ACTIONS = [
  'xray:PutTraceSegments', 'xray:PutTelemetryRecords', 'xray:GetSamplingRules', 'xray:GetSamplingTargets',
  'logs:CreateLogDelivery', 'logs:GetLogDelivery', 'logs:UpdateLogDelivery', 'logs:DeleteLogDelivery', 'logs:ListLogDeliveries',
  'logs:PutResourcePolicy', 'logs:DescribeResourcePolicies', 'logs:DescribeLogGroups',
];

/** The id of the policy that holds the unscoped statements, beside the role's default policy. */
const UNSCOPED_POLICY_ID = 'UnscopedActionsPolicy';

/**
 * The other unscoped actions of the machine whose constructor runs: aws-cdk-lib's constructor adds the
 * statements of X-Ray, of log delivery and of the steps through `addToRolePolicy` before this class's own
 * fields exist. Each constructor sets it before its super call.
 */
let constructingOtherActions: readonly string[] = [];

/**
 * A Step Functions state machine as the library builds its own: traced with X-Ray, every event
 * logged (without execution data, which may hold dataset keys) to a log group `<id>Logs` beside it
 * (a year by default). The role's statements on `*` for actions that have no resource-level
 * permissions (X-Ray's, CloudWatch Logs delivery's, and `otherUnscopedActions`) are kept in a policy
 * of their own, `UnscopedActionsPolicy`, on which alone the cdk-nag finding is acknowledged with its
 * reason: AwsSolutionsChecks passes, and still reports any other statement on `*` given to the role.
 */
export class LoggedStateMachine extends sfn.StateMachine {
  /** The log group of the executions' events. */
  public readonly logGroup: logs.ILogGroup;

  /** The actions whose statements on `*` go to the unscoped policy. */
  private readonly unscopedActions: ReadonlySet<string>;

  constructor(scope: Construct, id: string, props: LoggedStateMachineProps) {
    const logGroup = createLogGroup(scope, `${id}Logs`, { retention: props.logRetention, encryptionKey: props.encryptionKey });
    constructingOtherActions = props.otherUnscopedActions ?? [];
    super(scope, id, {
      definitionBody: props.definitionBody,
      stateMachineName: props.stateMachineName,
      timeout: props.timeout,
      role: props.role,
      tracingEnabled: true,
      logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: false },
    });
    this.logGroup = logGroup;
    this.unscopedActions = new Set([...TRACING_AND_LOG_DELIVERY_ACTIONS, ...props.otherUnscopedActions ?? []]);
    const policy = this.node.tryFindChild(UNSCOPED_POLICY_ID);
    if (policy) {
      // CloudFormation creates the machine once its role may deliver its logs, as for the default policy.
      this.node.defaultChild!.node.addDependency(policy);
      const others = props.otherUnscopedActions?.length ? ` and ${props.otherUnscopedActions.join(', ')}` : '';
      acknowledge(policy, 'AwsSolutions-IAM5[Resource::*]',
        `X-Ray tracing and CloudWatch Logs delivery APIs (xray:PutTraceSegments, logs:CreateLogDelivery, ...)${others} have no resource-level permissions`);
    }
  }

  /** Adds a statement to the role: to the unscoped policy when it grants only actions without resource-level permissions on `*`. */
  public addToRolePolicy(statement: iam.PolicyStatement): void {
    if (this.grantsOnlyUnscopedActions(statement)) {
      this.unscopedPolicy().addStatements(statement);
    } else {
      super.addToRolePolicy(statement);
    }
  }

  private grantsOnlyUnscopedActions(statement: iam.PolicyStatement): boolean {
    // Undefined while aws-cdk-lib's constructor runs.
    const unscoped = this.unscopedActions ?? new Set([...TRACING_AND_LOG_DELIVERY_ACTIONS, ...constructingOtherActions]);
    return statement.effect === iam.Effect.ALLOW
      && statement.resources.length === 1 && statement.resources[0] === '*'
      && statement.notActions.length === 0 && statement.notResources.length === 0
      && statement.actions.length > 0 && statement.actions.every((action) => unscoped.has(action));
  }

  private unscopedPolicy(): iam.Policy {
    const existing = this.node.tryFindChild(UNSCOPED_POLICY_ID) as iam.Policy | undefined;
    if (existing) return existing;
    const policy = new iam.Policy(this, UNSCOPED_POLICY_ID);
    // Through the role, which attaches nothing when imported as immutable: the policy is then not synthesized.
    this.role.attachInlinePolicy(policy);
    return policy;
  }
}
