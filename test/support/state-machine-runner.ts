import * as path from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { Template } from 'aws-cdk-lib/assertions';
import { StateMachine } from 'aws-local-stepfunctions';
import type { LambdaHandlerName} from '../../lib/private/assets';
import { lambdaBundleDirectory } from '../../lib/private/assets';
import type { ApiService } from './api-model';
import { ApiModel } from './api-model';
import type { AwsJsonServer } from './aws-json-server';
import { renderDefinition } from './cloud-assembly';
import type { S3TestServer } from './s3-server';
import { s3TestClient } from './s3-server';

/*
 * Runs a synthesized state machine with aws-local-stepfunctions, an Amazon States Language
 * interpreter, and the real handlers against the local servers. What the interpreter cannot do,
 * this file does in the test's copy of the definition, and says so here:
 *
 * - Lambda tasks run the bundled handler (`lambda/dist/<handler>/index.js`, the function's code)
 *   of the function the state names, with the function's environment from the template and the
 *   SDK pointed at the local servers (AWS_ENDPOINT_URL_*); the payload and result go through JSON
 *   as they do in Lambda, and an error thrown becomes the task's error, named by its `name`
 *   (Lambda's errorType), with Lambda's JSON of the error as cause.
 * - `aws-sdk:<service>:<action>` tasks send their Parameters as the JSON request of the action to
 *   the local JSON-protocol server, which checks it against the service's API model; its errors
 *   become `<Service>.<code>`.
 * - `sagemaker:createTrainingJob.sync` creates the job on the local server, then polls
 *   DescribeTrainingJob (without waiting) until the job ends; Completed gives the description as
 *   the result, Failed or Stopped fail the task with States.TaskFailed and the description as cause.
 * - `sns:publish` is recorded (`Execution.notifications`): there is no local SNS.
 * - The Distributed Map (ItemReader over a JSON array in S3) has no counterpart in the interpreter,
 *   whose Map reads its items from the state's input: the Map state becomes a Task that reads the
 *   items from the local S3 server as the S3 JSON ItemReader does, and runs the ItemProcessor
 *   through the interpreter once per item (ItemSelector applied with `$$.Map.Item`), at most
 *   MaxConcurrency at a time. Children already running finish when one fails (Step Functions
 *   would stop them); with no tolerated failures, one failed child fails the Map with
 *   States.ExceedToleratedFailureThreshold.
 * - Workflow variables (`Assign`, `$name`) are not in the interpreter: each Assign (literal values
 *   only) becomes a Task state after its state or catcher that stores them, and `$name` is read
 *   from `$$.Variables.name`. States inside Parallel branches are run as they are (neither is
 *   emulated there: no state machine of this library has them).
 * - Wait states and Retry intervals are set to 0 ms: the order of attempts is kept, not the time.
 * - A task without TimeoutSeconds times out after 60 s in the interpreter (Step Functions: none).
 */

// aws-local-stepfunctions 3 declares Node.js 22 for one call, Promise.withResolvers (its task
// timeout); the project supports Node.js 20, where it is given here.
const promiseStatics = Promise as unknown as { withResolvers?: () => unknown };
promiseStatics.withResolvers ??= () => {
  let resolve!: (value: unknown) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

/** What the handlers and tasks talk to. */
export interface LocalServices {
  readonly s3: S3TestServer;
  /** SageMaker, FSx, CloudWatch, EventBridge: the `aws-sdk` and `.sync` tasks and the handlers' clients. */
  readonly aws?: AwsJsonServer;
}

/** One invocation of a Lambda task, before its handler runs. */
export interface LambdaCall {
  readonly state: string;
  readonly handler: string;
  readonly event: any;
  /** 1 for the first invocation of this state with this event, 2 for its first retry, ... */
  readonly attempt: number;
}

/** How to run one execution. */
export interface RunOptions {
  /** `$$.Execution.Name`. */
  readonly executionName?: string;
  /**
   * An error to fail a Lambda invocation with instead of running its handler (Lambda throttling, a crash);
   * awaited first, so it may also change the world the handler then sees (an object deleted since the plan).
   */
  readonly failLambda?: (call: LambdaCall) => Error | undefined | Promise<Error | undefined>;
  /**
   * An invocation whose answer is lost while the function goes on running (Lambda.ServiceException after
   * the invocation started): given `{ error, start }`, the task fails with `error` at once (its Retry
   * policy applies), and the handler runs on the same event once `start` resolves, whenever that is,
   * in the background; how it ended is in {@link Execution.detached}, and given to `ended` as soon as it has.
   */
  readonly detachLambda?: (call: LambdaCall) => {
    readonly error: Error;
    readonly start: Promise<void>;
    readonly ended?: (outcome: DetachedOutcome) => void;
  } | undefined;
}

/** How a detached invocation (RunOptions.detachLambda) ended: the handler's result, or its error. */
export interface DetachedOutcome {
  readonly call: LambdaCall;
  readonly result?: unknown;
  readonly error?: Error;
}

/** A published notification. */
export interface Notification {
  readonly TopicArn: string;
  readonly Subject?: string;
  readonly Message: any;
}

/** How an execution ended, and what it did. */
export interface Execution {
  readonly status: 'SUCCEEDED' | 'FAILED';
  readonly output?: any;
  readonly error?: string;
  readonly cause?: string;
  /** The states entered, in order, Map children's included (the harness's own states left out). */
  readonly states: string[];
  /** `<state>: <error>` of every retried attempt. */
  readonly retries: string[];
  readonly notifications: Notification[];
  readonly lambdaCalls: LambdaCall[];
  /** The detached invocations (RunOptions.detachLambda), each settling when its handler has ended. */
  readonly detached: Array<Promise<DetachedOutcome>>;
}

const ACCOUNT = '111111111111';
const REGION = 'us-east-1';
/** Names of the states this harness adds, never entered by Step Functions. */
const HARNESS_MARK = '⟪harness⟫';
/** The task resources this harness runs locally (see above). */
const LOCAL_TASKS = [
  new RegExp(`^arn:aws:states:::${HARNESS_MARK}(assign|distributedMap)$`),
  /^arn:aws:lambda:/,
  /^arn:aws:states:::aws-sdk:\w+:\w+$/,
  /^arn:aws:states:::sagemaker:createTrainingJob\.sync$/,
  /^arn:aws:states:::sns:publish$/,
];
const TERMINAL_JOB_STATUSES = ['Completed', 'Failed', 'Stopped'];
const MAX_JOB_POLLS = 100;

/** A state machine of a synthesized template, ready to run against the local servers. */
export class StateMachineRunner {
  /** The state machine `logicalId` of the template (the only one when omitted). */
  public static fromTemplate(template: Template, services: LocalServices, options: {
    logicalId?: string;
    /** Values of `Ref`s the test decides, by logical ID: the buckets on the local S3 server. */
    references?: Record<string, string>;
  } = {}): StateMachineRunner {
    const resources = template.toJSON().Resources as Record<string, any>;
    const machines = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::StepFunctions::StateMachine');
    const [logicalId, machine] = options.logicalId
      ? [options.logicalId, resources[options.logicalId]]
      : machines.length === 1 ? machines[0] : [undefined, undefined];
    if (!machine) throw new Error(`no state machine ${options.logicalId ?? '(give logicalId: the template has several)'}`);
    const resolve = resolver(resources, options.references ?? {});
    return new StateMachineRunner(logicalId!, renderDefinition(machine.Properties.DefinitionString, resolve), resources, resolve, services);
  }

  private readonly handlers = new Map<string, (event: unknown) => Promise<unknown>>();

  private constructor(private readonly logicalId: string, public readonly definition: any,
    private readonly resources: Record<string, any>, private readonly resolve: (value: unknown) => any,
    private readonly services: LocalServices) {}

  /** Runs one execution with `input`, to its end. */
  public async run(input: unknown, options: RunOptions = {}): Promise<Execution> {
    const name = options.executionName ?? 'execution-1';
    const record = {
      states: [] as string[], retries: [] as string[], notifications: [] as Notification[], lambdaCalls: [] as LambdaCall[],
      detached: [] as Array<Promise<DetachedOutcome>>,
    };
    const restore = setEnvironment(this.sdkEnvironment());
    try {
      const context = {
        Execution: { Id: `arn:aws:states:${REGION}:${ACCOUNT}:execution:${this.logicalId}:${name}`, Name: name },
        Variables: {},
      };
      const output = await this.runDefinition(this.definition, input, context, options, record);
      return { status: 'SUCCEEDED', output, ...record };
    } catch (error) {
      const failure = (error as { cause?: { name?: string; message?: string } }).cause;
      if (!failure?.name) throw error;
      return { status: 'FAILED', error: failure.name, cause: failure.message, ...record };
    } finally {
      restore();
    }
  }

  private async runDefinition(definition: any, input: unknown, context: any, options: RunOptions, record: Omit<Execution, 'status'>): Promise<unknown> {
    const patched = patchDefinition(definition);
    // Checked before the run: a harness error inside a task would be caught as the task's failure.
    for (const [state, task] of Object.entries<any>(patched.States)) {
      if (task.Type === 'Task' && !LOCAL_TASKS.some((pattern) => pattern.test(task.Resource))) {
        throw new Error(`state ${state}: no local counterpart of ${task.Resource}`);
      }
    }
    const overrides = {
      taskResourceLocalHandlers: Object.fromEntries(Object.entries<any>(patched.States)
        .filter(([, state]) => state.Type === 'Task')
        .map(([state, task]) => [state, (event: any) => this.runTask(state, task, event, context, options, record)])),
      waitTimeOverrides: Object.fromEntries(Object.entries<any>(patched.States).filter(([, s]) => s.Type === 'Wait').map(([n]) => [n, 0])),
      retryIntervalOverrides: Object.fromEntries(Object.entries<any>(patched.States).filter(([, s]) => s.Retry).map(([n]) => [n, 0])),
    };
    const machine = new StateMachine(patched, { validationOptions: { checkArn: false } });
    const execution = machine.run(input as any, { overrides, context });
    const logged = (async () => {
      const failedWith = new Map<string, string>();
      for await (const event of execution.eventLogs) {
        if (!('state' in event) || event.state.name.includes(HARNESS_MARK)) continue;
        if (event.type === 'StateEntered') record.states.push(event.state.name);
        if (event.type === 'StateFailed') failedWith.set(event.state.name, event.Error);
        if (event.type === 'StateRetried') record.retries.push(`${event.state.name}: ${failedWith.get(event.state.name)}`);
      }
    })();
    try {
      return await execution.result;
    } finally {
      await logged;
    }
  }

  private async runTask(state: string, task: any, event: any, context: any, options: RunOptions, record: Omit<Execution, 'status'>): Promise<any> {
    const resource: string = task.Resource;
    if (resource === `arn:aws:states:::${HARNESS_MARK}assign`) {
      Object.assign(context.Variables, task.Comment && JSON.parse(task.Comment));
      return {};
    }
    if (resource === `arn:aws:states:::${HARNESS_MARK}distributedMap`) return this.runDistributedMap(JSON.parse(task.Comment), event, options, record);
    if (resource.startsWith('arn:aws:lambda:')) return this.invokeLambda(state, resource, event, options, record);
    const sdk = /^arn:aws:states:::aws-sdk:(\w+):(\w+)$/.exec(resource);
    if (sdk) return this.callApi(sdk[1] as ApiService, pascal(sdk[2]), event);
    if (resource === 'arn:aws:states:::sagemaker:createTrainingJob.sync') return this.trainSync(event);
    if (resource === 'arn:aws:states:::sns:publish') {
      record.notifications.push(event);
      return { MessageId: `message-${record.notifications.length}` };
    }
    throw new Error(`state ${state}: ${resource} passed the check of LOCAL_TASKS but has no branch here`);
  }

  private async invokeLambda(state: string, arn: string, event: unknown, options: RunOptions, record: Omit<Execution, 'status'>): Promise<unknown> {
    const logicalId = arn.split(':').pop()!;
    const fn = this.resources[logicalId];
    // The function's handler, as lib/private/handler-function.ts names it in its environment.
    const handlerName: LambdaHandlerName = fn.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME;
    const payload = JSON.parse(JSON.stringify(event ?? null));
    const key = JSON.stringify([state, payload]);
    const call: LambdaCall = { state, handler: handlerName, event: payload, attempt: record.lambdaCalls.filter((c) => JSON.stringify([c.state, c.event]) === key).length + 1 };
    record.lambdaCalls.push(call);
    const injected = await options.failLambda?.(call);
    if (injected) throw injected;
    const handler = this.lambdaHandler(logicalId, handlerName, fn);
    const detach = options.detachLambda?.(call);
    if (detach) {
      record.detached.push(detach.start.then(async () => {
        // The execution may have ended: the handler's SDK clients still need the local servers.
        const restore = setEnvironment(this.sdkEnvironment());
        let outcome: DetachedOutcome;
        try {
          outcome = { call, result: JSON.parse(JSON.stringify(await handler(payload)) ?? 'null') };
        } catch (error) {
          outcome = { call, error: error as Error };
        } finally {
          restore();
        }
        detach.ended?.(outcome);
        return outcome;
      }));
      throw detach.error;
    }
    try {
      return JSON.parse(JSON.stringify(await handler(payload)) ?? 'null');
    } catch (error) {
      const { name, message, stack } = error as Error;
      // As Lambda reports a function error: errorType names the error, the cause is the error's JSON.
      throw Object.assign(new Error(JSON.stringify({ errorType: name, errorMessage: message, trace: stack?.split('\n') ?? [] })), { name });
    }
  }

  private lambdaHandler(logicalId: string, handlerName: LambdaHandlerName, fn: any): (event: unknown) => Promise<unknown> {
    let handler = this.handlers.get(logicalId);
    if (!handler) {
      const environment = Object.fromEntries(Object.entries<unknown>(fn.Properties.Environment.Variables).map(([k, v]) => [k, String(this.resolve(v))]));
      const restore = setEnvironment({ ...environment, POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true', POWERTOOLS_METRICS_NAMESPACE: 'test' });
      try {
        jest.isolateModules(() => {
          // eslint-disable-next-line @typescript-eslint/no-require-imports
          handler = require(path.join(lambdaBundleDirectory(handlerName), 'index.js')).handler;
        });
      } finally {
        restore();
      }
      this.handlers.set(logicalId, handler!);
    }
    return handler!;
  }

  private async callApi(service: ApiService, operation: string, request: unknown): Promise<any> {
    if (!this.services.aws) throw new Error(`${service} ${operation}: no local AWS JSON server given`);
    const model = ApiModel.load(service);
    const response = await fetch(this.services.aws.endpoint, {
      method: 'POST',
      headers: { 'content-type': `application/x-amz-json-${model.jsonVersion}`, 'x-amz-target': `${model.targetPrefix}.${operation}` },
      body: JSON.stringify(request),
    });
    const body = await response.json() as any;
    if (!response.ok) {
      const code = String(body.__type ?? 'UnknownError').split('#').pop();
      throw Object.assign(new Error(body.message ?? code), { name: `${pascal(service)}.${code}` });
    }
    return body;
  }

  private async trainSync(request: any): Promise<unknown> {
    await this.callApi('sagemaker', 'CreateTrainingJob', request);
    for (let poll = 0; poll < MAX_JOB_POLLS; poll++) {
      const job = await this.callApi('sagemaker', 'DescribeTrainingJob', { TrainingJobName: request.TrainingJobName });
      if (!TERMINAL_JOB_STATUSES.includes(job.TrainingJobStatus)) continue;
      if (job.TrainingJobStatus === 'Completed') return job;
      throw Object.assign(new Error(JSON.stringify(job)), { name: 'States.TaskFailed' });
    }
    throw new Error(`training job ${request.TrainingJobName} did not end after ${MAX_JOB_POLLS} DescribeTrainingJob calls`);
  }

  private async runDistributedMap(map: any, input: unknown, options: RunOptions, record: Omit<Execution, 'status'>): Promise<unknown[]> {
    const location = await this.runDefinition({
      StartAt: 'ItemReader', States: { ItemReader: { Type: 'Pass', Parameters: map.ItemReader.Parameters, End: true } },
    }, input, {}, options, { ...record, states: [] }) as { Bucket: string; Key: string };
    const s3 = s3TestClient(this.services.s3);
    const object = await s3.send(new GetObjectCommand(location)).finally(() => s3.destroy());
    const items = JSON.parse(await object.Body!.transformToString()) as unknown[];
    if (!Array.isArray(items)) throw Object.assign(new Error(`s3://${location.Bucket}/${location.Key} is not a JSON array`), { name: 'States.ItemReaderFailed' });
    const processor = {
      StartAt: `${HARNESS_MARK}ItemSelector`,
      States: {
        ...map.ItemProcessor.States,
        [`${HARNESS_MARK}ItemSelector`]: { Type: 'Pass', ...(map.ItemSelector ? { Parameters: map.ItemSelector } : {}), Next: map.ItemProcessor.StartAt },
      },
    };
    const results: unknown[] = new Array(items.length);
    let failures = 0;
    let firstFailure: unknown;
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const index = next++;
        const context = { Map: { Item: { Index: index, Value: items[index] } }, Variables: {} };
        try {
          results[index] = await this.runDefinition(processor, input, context, options, record);
        } catch (error) {
          failures++;
          firstFailure ??= error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(map.MaxConcurrency || items.length, items.length)) }, worker));
    const tolerated = Math.max(map.ToleratedFailureCount ?? 0, Math.floor(((map.ToleratedFailurePercentage ?? 0) / 100) * items.length));
    if (failures > tolerated) {
      const cause = (firstFailure as { cause?: Error }).cause ?? (firstFailure as Error);
      throw Object.assign(new Error(`${failures} of ${items.length} items failed, first: ${cause.name}: ${cause.message}`),
        { name: 'States.ExceedToleratedFailureThreshold' });
    }
    return results;
  }

  private sdkEnvironment(): Record<string, string> {
    const { s3, aws } = this.services;
    return {
      AWS_REGION: s3.region,
      AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      ...(aws ? { AWS_ENDPOINT_URL_SAGEMAKER: aws.endpoint, AWS_ENDPOINT_URL_CLOUDWATCH: aws.endpoint, AWS_ENDPOINT_URL_EVENTBRIDGE: aws.endpoint } : {}),
    };
  }
}

/**
 * The test's copy of a definition as the interpreter can run it: Distributed Maps as harness
 * tasks, and each Assign as a harness task after its state or catcher.
 */
function patchDefinition(definition: any): any {
  const states: Record<string, any> = {};
  for (const [name, original] of Object.entries<any>(definition.States)) {
    let state = rewriteVariableReferences(original);
    if (state.Type === 'Map' && state.ItemReader) state = distributedMapTask(name, state);
    if (state.Assign) {
      const assign = `${name} ${HARNESS_MARK}Assign`;
      states[assign] = assignTask(name, state.Assign, state.End ? { End: true } : { Next: state.Next });
      const { Assign: _assign, End: _end, ...rest } = state;
      state = { ...rest, Next: assign };
    }
    if (state.Catch) {
      state = {
        ...state,
        Catch: state.Catch.map((catcher: any, i: number) => {
          if (!catcher.Assign) return catcher;
          const assign = `${name} ${HARNESS_MARK}Catch${i}Assign`;
          states[assign] = assignTask(name, catcher.Assign, { Next: catcher.Next });
          const { Assign: _assign, ...rest } = catcher;
          return { ...rest, Next: assign };
        }),
      };
    }
    if (state.Type === 'Choice' && state.Choices.some((c: any) => c.Assign)) throw new Error(`state ${name}: Assign in a Choice rule is not emulated`);
    states[name] = state;
  }
  return { ...definition, States: states };
}

function assignTask(state: string, assign: Record<string, unknown>, next: object): object {
  const dynamic = Object.keys(assign).filter((key) => key.endsWith('.$'));
  if (dynamic.length) throw new Error(`state ${state}: Assign of paths (${dynamic.join(', ')}) is not emulated, only literal values`);
  return { Type: 'Task', Resource: `arn:aws:states:::${HARNESS_MARK}assign`, Comment: JSON.stringify(assign), ResultPath: null, ...next };
}

/** The Map state as a Task the harness runs (see above); unsupported Distributed Map features are refused. */
function distributedMapTask(name: string, state: any): object {
  const unsupported = ['ItemBatcher', 'ResultWriter', 'ItemsPath', 'Parameters'].filter((field) => field in state);
  if (unsupported.length || state.ItemReader.ReaderConfig?.InputType !== 'JSON' || !/:states:::s3:getObject$/.test(state.ItemReader.Resource)) {
    throw new Error(`state ${name}: only a Distributed Map over a JSON array in S3 is emulated (${unsupported.join(', ') || JSON.stringify(state.ItemReader)})`);
  }
  const { ItemReader, ItemSelector, ItemProcessor, MaxConcurrency, ToleratedFailurePercentage, ToleratedFailureCount, Label: _label, ...task } = state;
  return {
    ...task,
    Type: 'Task',
    Resource: `arn:aws:states:::${HARNESS_MARK}distributedMap`,
    Comment: JSON.stringify({ ItemReader, ItemSelector, ItemProcessor, MaxConcurrency, ToleratedFailurePercentage, ToleratedFailureCount }),
  };
}

/** `$name` (a workflow variable) in a path → `$$.Variables.name`. */
function rewriteVariableReferences(value: any, key = ''): any {
  if (Array.isArray(value)) return value.map((v) => rewriteVariableReferences(v));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'ItemProcessor' ? v : rewriteVariableReferences(v, k)]));
  }
  if (typeof value === 'string' && (key.endsWith('.$') || /Path$|^Variable$/.test(key))) {
    return value.replace(/(^|[\s(,])\$(?=[A-Za-z_])/g, '$1$$$$.Variables.');
  }
  return value;
}

/** Test values of CloudFormation references, by the referenced resource's type. */
function resolver(resources: Record<string, any>, references: Record<string, string>): (value: unknown) => any {
  const pseudo: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::Region': REGION, 'AWS::AccountId': ACCOUNT, 'AWS::URLSuffix': 'amazonaws.com' };
  const ref = (id: string): string => {
    if (pseudo[id] ?? references[id]) return pseudo[id] ?? references[id];
    const type = resources[id]?.Type;
    const byType: Record<string, string> = {
      'AWS::S3::Bucket': id.toLowerCase(),
      'AWS::SNS::Topic': `arn:aws:sns:${REGION}:${ACCOUNT}:${id}`,
      'AWS::FSx::FileSystem': 'fs-0123456789abcdef0',
      'AWS::EC2::Subnet': 'subnet-0123456789abcdef0',
      'AWS::EC2::SecurityGroup': 'sg-0123456789abcdef0',
    };
    if (!byType[type]) throw new Error(`no test value for {"Ref": "${id}"} (${type})`);
    return byType[type];
  };
  const getAtt = (id: string, attribute: string): string => {
    const type = resources[id]?.Type;
    if (type === 'AWS::Lambda::Function' && attribute === 'Arn') return `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${id}`;
    if (type === 'AWS::IAM::Role' && attribute === 'Arn') return `arn:aws:iam::${ACCOUNT}:role/${id}`;
    if (type === 'AWS::EC2::SecurityGroup' && attribute === 'GroupId') return 'sg-0123456789abcdef0';
    if (type === 'AWS::FSx::FileSystem' && attribute === 'LustreMountName') return 'abcdefgh';
    if (type === 'AWS::S3::Bucket' && attribute === 'Arn') return `arn:aws:s3:::${ref(id)}`;
    throw new Error(`no test value for {"Fn::GetAtt": ["${id}", "${attribute}"]} (${type})`);
  };
  const resolve = (value: any): any => {
    if (typeof value !== 'object' || value === null) return value;
    if ('Ref' in value) return ref(value.Ref);
    if ('Fn::GetAtt' in value) return getAtt(value['Fn::GetAtt'][0], value['Fn::GetAtt'][1]);
    if ('Fn::Join' in value) return (value['Fn::Join'][1] as unknown[]).map(resolve).join(value['Fn::Join'][0]);
    throw new Error(`no test value for ${JSON.stringify(value)}`);
  };
  return resolve;
}

function setEnvironment(variables: Record<string, string>): () => void {
  const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
  Object.assign(process.env, variables);
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
