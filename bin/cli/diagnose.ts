import * as fs from 'node:fs';
import { JsonLimitError, readBoundedJsonFile } from '../../lambda/io/bounded-json';
import { printable, printableMessage } from '../../lambda/io/printable';
import { createAwsClients, isAwsServiceError } from './aws-clients';
import { parseCommandArgs } from './command-args';
import { parsePositiveNumber, parseWholeNumber, UsageError } from './usage-error';
import type { InstanceHardware} from '../../lambda/diagnosis/collect-metrics';
import { collectJobMetrics, JobCollectionError } from '../../lambda/diagnosis/collect-metrics';
import { LOADER_METRICS } from '../../lib/contract/metric-names';
import { diagnoseJob } from '../../lambda/diagnosis/diagnose-job';
import type { JobMetricSet} from '../../lambda/diagnosis/metric-set';
import { MetricSetError, parseMetricSet } from '../../lambda/diagnosis/metric-set';
import { renderMarkdown } from '../../lambda/diagnosis/render-report';
import { quoted } from '../../lambda/io/printable';

export const DIAGNOSE_USAGE = `Usage: training-io diagnose <job-name> [options]
       training-io diagnose --metrics FILE.json [--json]

Say what held a SageMaker training job's GPUs back: a long download before training,
CPU-bound preprocessing, input I/O or too few data-loader workers, batches too small for
the GPU memory, or nothing. Live, it reads the job (DescribeTrainingJob) and its CloudWatch
metrics with your AWS credentials; offline, a metric set saved by --save-metrics (or the
metrics.json a TrainingPipeline writes beside each report). Both print the same report.

  --metrics FILE            diagnose offline from this metric set
  --save-metrics FILE       also write the collected metric set to FILE
  --json                    print report.json instead of the Markdown report
  --gpus N --vcpus N        GPUs and vCPUs of the instance type (default: the instance catalog)
  --cache-id ID             an FSx for Lustre file system the job read (fs-...), and
  --cache-baseline-mbps N   its baseline throughput in MB/s
  --samples-metric NAME     metric definition of samples/s (default: ${LOADER_METRICS.samplesPerSecond})
  --wait-metric NAME        metric definition of the data-wait share (default: ${LOADER_METRICS.dataWaitFraction})
  --endpoint-url URL        endpoint of SageMaker and CloudWatch (a private endpoint)
  --region R                region (default: AWS_REGION, then AWS_DEFAULT_REGION)

Exit status: 0 diagnosed, 1 the job or file could not be read, 2 bad arguments.
`;

export async function diagnoseCommand(args: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  try {
    return await diagnose(args, out, err);
  } catch (error) {
    if (error instanceof JobCollectionError || error instanceof MetricSetError || isAwsServiceError(error)) {
      err.write(`training-io diagnose: ${printableMessage(error.message)}\n`);
      return 1;
    }
    throw error;
  }
}

async function diagnose(args: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  const { values, positionals, endpoint } = parseCommandArgs({
    args,
    allowPositionals: true,
    options: {
      'metrics': { type: 'string' },
      'save-metrics': { type: 'string' },
      'json': { type: 'boolean', default: false },
      'gpus': { type: 'string' },
      'vcpus': { type: 'string' },
      'cache-id': { type: 'string' },
      'cache-baseline-mbps': { type: 'string' },
      'samples-metric': { type: 'string' },
      'wait-metric': { type: 'string' },
    },
  }, { usage: DIAGNOSE_USAGE, endpoint: true });
  let set: JobMetricSet;
  if (values.metrics !== undefined) {
    if (positionals.length) throw new UsageError(`give a job name or --metrics FILE, not both (got ${quoted(positionals[0])} and --metrics)`);
    const live = [
      ...['save-metrics', 'gpus', 'vcpus', 'cache-id', 'cache-baseline-mbps', 'samples-metric', 'wait-metric'].filter((flag) => values[flag as keyof typeof values] !== undefined),
      ...(endpoint.endpointUrl !== undefined ? ['endpoint-url'] : []),
      ...(endpoint.region !== undefined ? ['region'] : []),
    ];
    if (live.length) throw new UsageError(`--${live[0]} reads the live job: it does not apply to --metrics FILE`);
    set = readMetricSet(values.metrics);
  } else {
    if (positionals.length !== 1) throw new UsageError(`diagnose takes one training job name (or --metrics FILE), got ${positionals.length} argument(s)`);
    const jobName = positionals[0];
    if (!/^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/.test(jobName)) {
      throw new UsageError(`${quoted(jobName)} is not a SageMaker training job name (1-63 letters, digits and hyphens)`);
    }
    const hardware = hardwareFlags(values.gpus, values.vcpus);
    const cache = cacheFlags(values['cache-id'], values['cache-baseline-mbps']);
    const clients = createAwsClients(endpoint);
    // The catalog needs aws-cdk-lib (a quarter second to load): only when the counts are not given.
    const catalog = hardware ? undefined : (await import('../../lib/instances/training-instance')).TrainingInstance;
    set = await collectJobMetrics({
      ...clients,
      jobName,
      hardwareOf: (instanceType) => hardware ?? catalogHardware(catalog!.all(), instanceType),
      loaderMetrics: {
        samplesPerSecond: values['samples-metric'] ?? LOADER_METRICS.samplesPerSecond,
        dataWaitFraction: values['wait-metric'] ?? LOADER_METRICS.dataWaitFraction,
      },
      cache,
    });
    if (values['save-metrics'] !== undefined) {
      fs.writeFileSync(values['save-metrics'], `${JSON.stringify(set, null, 1)}\n`);
      err.write(`training-io diagnose: metric set of ${jobName} saved to ${values['save-metrics']}\n`);
    }
  }
  const diagnosis = diagnoseJob(set);
  // The report quotes names from the job or the file (job, channels, hosts): each line escaped, as every line the CLI prints.
  out.write(values.json ? `${JSON.stringify(diagnosis, null, 2)}\n` : renderMarkdown(diagnosis).split('\n').map(printable).join('\n'));
  return 0;
}

/** The metric set in `file`: a regular file within the JSON limits (a device such as /dev/zero would be read until memory ran out). */
function readMetricSet(file: string): JobMetricSet {
  let document: unknown;
  try {
    document = readBoundedJsonFile(file);
  } catch (error) {
    if (error instanceof JsonLimitError) throw new MetricSetError(`--metrics ${error.message}`);
    if (error instanceof SyntaxError) throw new MetricSetError(`${file} is not JSON: ${error.message}`);
    throw new MetricSetError(`cannot read --metrics ${file}: ${(error as Error).message}`);
  }
  return parseMetricSet(document, file);
}

function hardwareFlags(gpus: string | undefined, vcpus: string | undefined): InstanceHardware | undefined {
  if (gpus === undefined && vcpus === undefined) return undefined;
  if (gpus === undefined || vcpus === undefined) throw new UsageError('give --gpus and --vcpus together: the report normalises by both');
  return { gpusPerInstance: parseWholeNumber('--gpus', gpus, 0), vcpusPerInstance: parseWholeNumber('--vcpus', vcpus, 1) };
}

function cacheFlags(id: string | undefined, baseline: string | undefined): { fileSystemId: string; baselineMBps: number } | undefined {
  if (id === undefined && baseline === undefined) return undefined;
  if (id === undefined || baseline === undefined) throw new UsageError('give --cache-id and --cache-baseline-mbps together');
  if (!/^fs-[0-9a-f]{8,}$/.test(id)) throw new UsageError(`--cache-id must be an FSx file system ID such as fs-0123456789abcdef0, got ${quoted(id)}`);
  return { fileSystemId: id, baselineMBps: parsePositiveNumber('--cache-baseline-mbps', baseline) };
}

function catalogHardware(instances: ReadonlyArray<{ instanceType: string; gpus: number; vcpus: number }>, instanceType: string): InstanceHardware | undefined {
  const instance = instances.find((i) => i.instanceType === instanceType);
  return instance && { gpusPerInstance: instance.gpus, vcpusPerInstance: instance.vcpus };
}
