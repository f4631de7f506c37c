import { Size } from 'aws-cdk-lib';
import { parseCommandArgs } from './command-args';
import { parsePositiveNumber, parseWholeNumber, UsageError } from './usage-error';
import { TrainingInstance } from '../../lib/instances/training-instance';
import { quoted } from '../../lambda/io/printable';

export const INSTANCES_USAGE = `Usage: training-io instances [--processes N] [--memory-per-worker GiB]

List the catalogued SageMaker training instances, their hardware, and the data-loader
workers and DALI threads each training process should run.

  --processes N            training processes per instance, 1 up to the most vCPUs of any
                           listed type (default: one per GPU/NeuronCore)
  --memory-per-worker GiB  memory budget of one data-loader worker (default: 2)

Workers per process = vCPUs per process - 1 (at least 1), capped so that
workers x memory-per-worker fit in the RAM per process.
`;

export function instancesCommand(args: string[], out: NodeJS.WritableStream): number {
  const { values } = parseCommandArgs({
    args,
    options: {
      'processes': { type: 'string' },
      'memory-per-worker': { type: 'string' },
    },
    strict: true,
  }, { usage: INSTANCES_USAGE });
  const processes = values.processes === undefined ? undefined : parseProcesses(values.processes);
  const memoryGiB = values['memory-per-worker'] === undefined
    ? undefined : parsePositiveNumber('--memory-per-worker', values['memory-per-worker']);
  const rows = [['type', 'vCPU', 'RAM GiB', 'GPUs', 'GPU', 'NVMe GB', 'Gbps', 'procs', 'workers', 'DALI thr']];
  for (const instance of TrainingInstance.all()) {
    if (processes !== undefined && processes > instance.vcpus) continue;
    const sizing = instance.sizeDataLoaders({
      processesPerInstance: processes,
      memoryPerWorker: memoryGiB === undefined ? undefined : Size.mebibytes(Math.round(memoryGiB * 1024)),
    });
    rows.push([
      instance.instanceType, String(instance.vcpus), String(instance.memoryGiB),
      instance.gpus ? String(instance.gpus) : `${instance.trainiumDevices} trn`,
      instance.gpuModel?.replace(/^NVIDIA (Tesla )?/, '').replace(/ Tensor Core$/, '') ?? 'Trainium',
      instance.localNvmeGB === undefined ? 'EBS' : String(instance.localNvmeGB),
      String(instance.networkGbps ?? '?'),
      String(sizing.processesPerInstance),
      `${sizing.loaderWorkers}${sizing.limitedByMemory ? '*' : ''}`,
      String(sizing.daliThreads),
    ]);
  }
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  for (const row of rows) {
    out.write(`${row.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd()}\n`);
  }
  out.write('\n* limited by memory, not vCPUs\n');
  return 0;
}

/** `--processes`: at most the vCPUs of the largest catalogued instance, which every process needs one of (else nothing would be listed). */
function parseProcesses(raw: string): number {
  const processes = parseWholeNumber('--processes', raw, 1);
  const mostVcpus = Math.max(...TrainingInstance.all().map((instance) => instance.vcpus));
  if (processes > mostVcpus) {
    throw new UsageError(`--processes must be between 1 and ${mostVcpus}, got ${quoted(raw)}: each process needs a vCPU, `
      + `and no catalogued instance has more than ${mostVcpus}`);
  }
  return processes;
}
