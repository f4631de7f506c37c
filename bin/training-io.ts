#!/usr/bin/env node
// The `training-io` command line. Each command is a small function over the library and the
// packing engine; this file only parses arguments and prints.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { Size } from 'aws-cdk-lib';
import { TrainingInstance } from '../lib/instances/training-instance';

const USAGE = `training-io: the command line of cdk-training-io

Usage:
  training-io <command> [options]

Commands:
  instances [--processes N] [--memory-per-worker GiB]
      List the catalogued SageMaker training instances with their hardware and the
      data-loader workers and DALI threads each training process should run.

Options:
  -h, --help      Show this help (or a command's help: training-io <command> --help)
  -v, --version   Show the version
`;

const INSTANCES_USAGE = `Usage: training-io instances [--processes N] [--memory-per-worker GiB]

  --processes N            training processes per instance (default: one per GPU/Trainium device)
  --memory-per-worker GiB  memory budget of one data-loader worker (default: 2)

Workers per process = vCPUs per process - 1 (at least 1), capped so that
workers x memory-per-worker fit in the RAM per process.
`;

/** A command-line mistake: printed with the usage, exit code 2. */
class UsageError extends Error {}

function positiveNumber(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new UsageError(`${flag} must be a number greater than 0, got '${raw}'`);
  }
  return value;
}

function instancesCommand(args: string[]): void {
  const { values } = parseArgs({
    args,
    options: {
      'processes': { type: 'string' },
      'memory-per-worker': { type: 'string' },
      'help': { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(INSTANCES_USAGE);
    return;
  }
  const processes = positiveNumber('--processes', values.processes);
  if (processes !== undefined && !Number.isInteger(processes)) {
    throw new UsageError(`--processes must be a whole number, got '${values.processes}'`);
  }
  const memoryGiB = positiveNumber('--memory-per-worker', values['memory-per-worker']);
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
    process.stdout.write(`${row.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd()}\n`);
  }
  process.stdout.write('\n* limited by memory, not vCPUs\n');
}

/** The package version, from the package.json above this file (bin/ in the repo, dist/bin/ when built). */
function version(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest)) return (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version: string }).version;
  }
  return 'unknown';
}

export function main(argv: string[]): number {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      case '-v':
      case '--version':
        process.stdout.write(`${version()}\n`);
        return 0;
      case 'instances':
        instancesCommand(rest);
        return 0;
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (error) {
    const usageProblem = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    if (!usageProblem) throw error;
    process.stderr.write(`training-io: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
}

if (require.main === module) {
  process.exitCode = main(process.argv.slice(2));
}
