#!/usr/bin/env node
// The `training-io` command line: parses the command, runs it, prints. The work is done by the
// library (lib/) and the packing engine shared with the Lambda handlers (lambda/packing/).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from './cli/usage-error';

const USAGE = `training-io: the command line of cdk-training-io

Usage:
  training-io <command> [options]

Commands:
  pack <source> <output>   pack small files into TFRecord/RecordIO shards; each side a
                           folder or s3://bucket/prefix/ (--endpoint-url URL, --region R)
  verify <dataset>         re-read a packed dataset (folder or s3:// URI): CRCs, indexes,
                           manifest totals
  instances                the training instances and their sized data-loader workers
  plan                     plan a job's data path: input mode, shards, workers, decoding,
                           start-up time and FSx size, with the reasons (--objects N
                           --bytes SIZE --instance TYPE [--count N] [--epochs N] [--reused] [--json])
  diagnose <job-name>      what held a training job's GPUs back, and what to change
                           (live from SageMaker and CloudWatch, or --metrics FILE.json)
  launch                   start a TrainingPipeline (--state-machine ARN) or one job
                           (--request FILE.json) and follow it to the end

Options:
  -h, --help      Show this help (or a command's: training-io <command> --help)
  -v, --version   Show the version
`;

/** The package version, from the package.json above this file (bin/ in the repo, dist/bin/ when built). */
function version(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest)) return (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version: string }).version;
  }
  return 'unknown';
}

/** `sleep`: how `launch` waits between polls (tests pass one that returns at once). */
export async function main(argv: string[], out = process.stdout, err = process.stderr, sleep?: (seconds: number) => Promise<void>): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
        err.write(USAGE);
        return 2;
      case '-h':
      case '--help':
      case 'help':
        out.write(USAGE);
        return 0;
      case '-v':
      case '--version':
        out.write(`${version()}\n`);
        return 0;
      // Commands load on demand: `instances` and `plan` need aws-cdk-lib (a quarter second to load), `pack` must not wait for it.
      case 'instances':
        return (await import('./cli/instances')).instancesCommand(rest, out);
      case 'plan':
        return (await import('./cli/plan')).planCommand(rest, out);
      case 'pack':
        return await (await import('./cli/pack')).packCommand(rest, out, err);
      case 'verify':
        return await (await import('./cli/verify')).verifyCommand(rest, out);
      case 'diagnose':
        return await (await import('./cli/diagnose')).diagnoseCommand(rest, out, err);
      case 'launch':
        return await (await import('./cli/launch')).launchCommand(rest, out, err, sleep);
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    err.write(`training-io: ${error.message}\n\n${error.usage ?? USAGE}`);
    return 2;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (error: Error) => {
    process.stderr.write(`training-io: ${error.message}\n`);
    process.exitCode = 1;
  });
}
