import { randomBytes } from 'node:crypto';
import type { CreateTrainingJobRequest, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { CreateTrainingJobCommand, DescribeTrainingJobCommand } from '@aws-sdk/client-sagemaker';
import type { HistoryEvent, SFNClient} from '@aws-sdk/client-sfn';
import { DescribeExecutionCommand, GetExecutionHistoryCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { createAwsClients, isAwsServiceError } from './aws-clients';
import { parseCommandArgs } from './command-args';
import { parseNumberInRange, UsageError } from './usage-error';
import type { PipelineExecutionInput, PipelineExecutionOutput } from '../../lib/pipeline/pipeline-execution';
import { PIPELINE_EXECUTION_NAME } from '../../lib/pipeline/private/execution-name';
import { readBoundedJsonFile } from '../../lambda/io/bounded-json';
import { printable, printableMessage, quoted } from '../../lambda/io/printable';

/** Bounds of --poll, in seconds. */
const MIN_POLL_SECONDS = 1;
const MAX_POLL_SECONDS = 3600;

export const LAUNCH_USAGE = `Usage: training-io launch --state-machine ARN [options]
       training-io launch --request FILE.json [options]

Start a TrainingPipeline (plan, pack, FSx import, train, diagnose) and follow it to the end;
or create one training job from a CreateTrainingJob request and follow it.

Pipeline:
  --state-machine ARN         the pipeline's state machine (the stack's output)
  --name NAME                 execution name, also the suffix of the job's name: letters, digits
                              and hyphens, at most ${PIPELINE_EXECUTION_NAME.maxLength} (default: launch-<UTC time>-<random>)
  --hyperparameter KEY=VALUE  a hyperparameter of this run over the construct's (repeatable)
  --force                     repack even when the dataset has not changed

Single job:
  --request FILE              a CreateTrainingJob request as JSON, every value literal (a request
                              rendered by TrainingJob.renderRequest() and resolved)
  --job-name NAME             the job's name (default: the request's TrainingJobName, else
                              training-io-<UTC time>)

  --no-follow                 start it and exit
  --poll SECONDS              how often to check progress, ${MIN_POLL_SECONDS}-${MAX_POLL_SECONDS} (default: 30)
  --endpoint-url URL          endpoint of Step Functions and SageMaker (a private endpoint)
  --region R                  region (default: AWS_REGION, then AWS_DEFAULT_REGION)

Exit status: 0 succeeded (or started, with --no-follow), 1 failed or stopped, 2 bad arguments.
`;

/** Waits between polls; replaced in tests. */
export type Sleep = (seconds: number) => Promise<void>;

const sleepFor: Sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

export async function launchCommand(args: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream, sleep: Sleep = sleepFor): Promise<number> {
  try {
    return await launch(args, out, err, sleep);
  } catch (error) {
    if (isAwsServiceError(error)) {
      err.write(`training-io launch: ${error.name}: ${printableMessage(error.message)}\n`);
      return 1;
    }
    throw error;
  }
}

async function launch(args: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream, sleep: Sleep): Promise<number> {
  const { values, endpoint } = parseCommandArgs({
    args,
    options: {
      'state-machine': { type: 'string' },
      'name': { type: 'string' },
      'hyperparameter': { type: 'string', multiple: true },
      'force': { type: 'boolean', default: false },
      'request': { type: 'string' },
      'job-name': { type: 'string' },
      'no-follow': { type: 'boolean', default: false },
      'poll': { type: 'string', default: '30' },
    },
  }, { usage: LAUNCH_USAGE, endpoint: true });
  const pipeline = values['state-machine'];
  const request = values.request;
  if ((pipeline === undefined) === (request === undefined)) {
    throw new UsageError('give --state-machine ARN (the pipeline) or --request FILE.json (a single job), one of the two');
  }
  // At least a second: every poll is a few API calls, and Step Functions and SageMaker throttle them.
  const poll = parseNumberInRange('--poll', values.poll, MIN_POLL_SECONDS, MAX_POLL_SECONDS, 'seconds');
  const follow = !values['no-follow'];

  if (pipeline !== undefined) {
    for (const flag of ['job-name'] as const) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} is for a single job (--request); the pipeline names its jobs`);
    }
    if (!/^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[A-Za-z0-9_-]{1,80}$/.test(pipeline)) {
      throw new UsageError(`--state-machine must be a state machine ARN (arn:aws:states:<region>:<account>:stateMachine:<name>), got ${quoted(pipeline)}`);
    }
    const name = values.name ?? defaultName('launch');
    checkExecutionName(name);
    const input: PipelineExecutionInput = { force: values.force, hyperparameters: parseHyperparameters(values.hyperparameter ?? []) };
    if (input.hyperparameters?.num_workers !== undefined) {
      // The shards were packed for the cluster's loader workers: another count splits them unevenly.
      err.write(`training-io launch: warning: num_workers=${input.hyperparameters.num_workers} replaces the loader workers the pipeline's `
        + 'dataset was packed for; some readers may get more shards than others (set loaderWorkers on the pipeline instead)\n');
    }
    const { sfn } = createAwsClients(endpoint);
    return runPipeline(sfn, pipeline, name, input, { follow, poll, out, err, sleep });
  }
  for (const flag of ['name', 'hyperparameter'] as const) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag} is for the pipeline (--state-machine); a single job takes its request as it is`);
  }
  if (values.force) throw new UsageError('--force is for the pipeline (--state-machine): a single job does not pack');
  const jobRequest = readRequest(request!, values['job-name']);
  const { sagemaker } = createAwsClients(endpoint);
  return runJob(sagemaker, jobRequest, { follow, poll, out, err, sleep });
}

interface Following {
  readonly follow: boolean;
  readonly poll: number;
  readonly out: NodeJS.WritableStream;
  readonly err: NodeJS.WritableStream;
  readonly sleep: Sleep;
}

async function runPipeline(sfn: SFNClient, stateMachineArn: string, name: string, input: PipelineExecutionInput, f: Following): Promise<number> {
  const started = await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }));
  const executionArn = started.executionArn!;
  f.out.write(`started ${executionArn}\n`);
  if (!f.follow) return 0;
  let printed = 0;
  for (;;) {
    // Print each state entered since the last look, then check whether the execution is over.
    let nextToken: string | undefined;
    do {
      const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn, nextToken, maxResults: 100 }));
      for (const event of page.events ?? []) {
        if (event.id === undefined || event.id <= printed) continue;
        f.out.write(describeEvent(event));
        printed = event.id;
      }
      nextToken = page.nextToken;
    } while (nextToken);
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    if (execution.status === 'RUNNING' || execution.status === 'PENDING_REDRIVE') {
      await f.sleep(f.poll);
      continue;
    }
    if (execution.status === 'SUCCEEDED') {
      const output = JSON.parse(execution.output ?? '{}') as Partial<PipelineExecutionOutput>;
      f.out.write(`succeeded: training job ${output.trainingJobName ?? '(unknown)'}\n`);
      if (output.diagnosis) {
        f.out.write(`diagnosis: ${output.diagnosis.verdict}: ${output.diagnosis.summary}\nreport: ${output.diagnosis.markdownUri}\n`);
      }
      return 0;
    }
    f.err.write(`training-io launch: execution ${name} ${execution.status?.toLowerCase() ?? 'ended'}`
      + `${execution.error ? `: ${execution.error}` : ''}${execution.cause ? ` (${execution.cause})` : ''}\n`);
    return 1;
  }
}

/** The history events worth a line: a state entered, a task that failed. */
function describeEvent(event: HistoryEvent): string {
  if (event.stateEnteredEventDetails?.name) return `  ${event.stateEnteredEventDetails.name}\n`;
  if (event.taskFailedEventDetails) return `  failed: ${event.taskFailedEventDetails.error ?? ''} ${event.taskFailedEventDetails.cause ?? ''}\n`;
  return '';
}

async function runJob(sagemaker: SageMakerClient, request: CreateTrainingJobRequest, f: Following): Promise<number> {
  const name = request.TrainingJobName!;
  const created = await sagemaker.send(new CreateTrainingJobCommand(request));
  f.out.write(`created ${created.TrainingJobArn ?? name}\n`);
  if (!f.follow) return 0;
  let printed = 0;
  for (;;) {
    const job = await sagemaker.send(new DescribeTrainingJobCommand({ TrainingJobName: name }));
    const transitions = job.SecondaryStatusTransitions ?? [];
    for (const transition of transitions.slice(printed)) {
      f.out.write(`  ${transition.Status}${transition.StatusMessage ? `: ${transition.StatusMessage}` : ''}\n`);
    }
    printed = transitions.length;
    if (job.TrainingJobStatus === 'InProgress' || job.TrainingJobStatus === 'Stopping') {
      await f.sleep(f.poll);
      continue;
    }
    if (job.TrainingJobStatus === 'Completed') {
      f.out.write(`completed: ${name}; see what held its GPUs back with: training-io diagnose ${name}\n`);
      return 0;
    }
    f.err.write(`training-io launch: training job ${name} ${job.TrainingJobStatus?.toLowerCase() ?? 'ended'}`
      + `${job.FailureReason ? `: ${job.FailureReason}` : ''}\n`);
    return 1;
  }
}

/** `KEY=VALUE` flags → hyperparameters (SageMaker takes strings). */
function parseHyperparameters(flags: string[]): { [name: string]: string } {
  const hyperparameters: { [name: string]: string } = {};
  for (const flag of flags) {
    const at = flag.indexOf('=');
    if (at < 1) throw new UsageError(`--hyperparameter must be KEY=VALUE, got ${quoted(flag)}`);
    const key = flag.slice(0, at);
    const value = flag.slice(at + 1);
    if (key.length > 256 || value.length > 256) throw new UsageError(`--hyperparameter ${key}: keys and values are at most 256 characters`);
    hyperparameters[key] = value;
  }
  return hyperparameters;
}

function checkExecutionName(name: string): void {
  if (!PIPELINE_EXECUTION_NAME.pattern.test(name) || name.length > PIPELINE_EXECUTION_NAME.maxLength) {
    throw new UsageError(`--name must be letters, digits and hyphens (not at the ends), at most ${PIPELINE_EXECUTION_NAME.maxLength} `
      + `characters: it is the suffix of the training job's name; got ${quoted(name)}`);
  }
}

/** `launch-20261102-090000-3fa2`: sortable, unique enough, a valid job-name suffix. */
function defaultName(prefix: string): string {
  const time = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${prefix}-${time}-${randomBytes(2).toString('hex')}`;
}

/** The request file: JSON, every value literal; the job name from --job-name, the file, or generated. */
function readRequest(file: string, jobName: string | undefined): CreateTrainingJobRequest {
  let document: unknown;
  try {
    // Bounded: a FIFO, a device or a huge or deeply nested file is refused, naming the file, before it is parsed.
    document = readBoundedJsonFile(file);
  } catch (error) {
    throw new UsageError(`--request ${quoted(file)} cannot be read as JSON: ${printable((error as Error).message)}`);
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    throw new UsageError(`--request ${quoted(file)} must hold a CreateTrainingJob request (a JSON object)`);
  }
  const { 'TrainingJobName.$': _computed, ...request } = document as Record<string, unknown>;
  const unresolved = findUnresolved(request, '');
  if (unresolved) {
    throw new UsageError(`--request ${file}: ${unresolved.path} is ${unresolved.what}; give the request with every value resolved `
      + '(the job name may be left out)');
  }
  const name = jobName ?? (typeof request.TrainingJobName === 'string' ? request.TrainingJobName : defaultName('training-io'));
  if (!/^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/.test(name)) {
    throw new UsageError(`the training job name must be 1-63 letters, digits and hyphens, got ${quoted(name)}`);
  }
  return { ...request, TrainingJobName: name } as CreateTrainingJobRequest;
}

/** The first value only known to Step Functions (`Field.$`) or CloudFormation (`Ref`, `Fn::…`) in a request. */
function findUnresolved(value: unknown, at: string): { path: string; what: string } | undefined {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnresolved(value[i], `${at}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, entry] of Object.entries(value)) {
    const path = at ? `${at}.${key}` : key;
    if (key.endsWith('.$')) return { path, what: 'a Step Functions path, computed per execution' };
    if (key === 'Ref' || key.startsWith('Fn::')) return { path: at || key, what: 'a CloudFormation value, known only once deployed' };
    const found = findUnresolved(entry, path);
    if (found) return found;
  }
  return undefined;
}
