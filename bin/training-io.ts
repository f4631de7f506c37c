#!/usr/bin/env node
// The `training-io` command line: parses the command, runs it, prints. The work is done by the
// library (lib/) and the packing engine shared with the Lambda handlers (lambda/packing/).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { didYouMean } from './cli/did-you-mean';
import { floorOf, nodeFloorProblem } from './cli/node-floor';
import { HelpRequested } from './cli/command-args';
import { UsageError } from './cli/usage-error';
import { printableMessage } from '../lambda/io/printable';

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

interface PackageManifest {
  readonly version: string;
  readonly engines?: { readonly node?: string };
}

/** The package.json above this file (bin/ in the repo, dist/bin/ when built); undefined where there is none. */
function packageManifest(): PackageManifest | undefined {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest)) return JSON.parse(fs.readFileSync(manifest, 'utf8')) as PackageManifest;
  }
  return undefined;
}

function version(): string {
  return packageManifest()?.version ?? 'unknown';
}

type Stream = NodeJS.WriteStream;
type Sleep = (seconds: number) => Promise<void>;

/**
 * Each command and how it runs. Commands load on demand: `instances` and `plan` need aws-cdk-lib (a
 * quarter second to load), `pack` must not wait for it.
 */
const COMMANDS: Record<string, (args: string[], out: Stream, err: Stream, sleep?: Sleep) => Promise<number>> = {
  pack: async (args, out, err) => (await import('./cli/pack')).packCommand(args, out, err),
  verify: async (args, out, err) => (await import('./cli/verify')).verifyCommand(args, out, err),
  instances: async (args, out) => (await import('./cli/instances')).instancesCommand(args, out),
  plan: async (args, out) => (await import('./cli/plan')).planCommand(args, out),
  diagnose: async (args, out, err) => (await import('./cli/diagnose')).diagnoseCommand(args, out, err),
  launch: async (args, out, err, sleep) => (await import('./cli/launch')).launchCommand(args, out, err, sleep),
};

/** `sleep`: how `launch` waits between polls (tests pass one that returns at once). */
export async function main(argv: string[], out = process.stdout, err = process.stderr, sleep?: Sleep): Promise<number> {
  const [command, ...rest] = argv;
  const run = command === undefined ? undefined : Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
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
      default:
        if (run === undefined) throw new UsageError(`unknown command '${command}'${didYouMean(command, [...Object.keys(COMMANDS), '--help', '--version'])}`);
        return await run(rest, out, err, sleep);
    }
  } catch (error) {
    if (error instanceof HelpRequested) {
      out.write(error.usage);
      return 0;
    }
    if (!(error instanceof UsageError)) throw error;
    // The mistake and where to read more: the whole usage would scroll the mistake off a terminal.
    err.write(`training-io: ${printableMessage(error.message)}\nRun '${run ? `training-io ${command} --help` : 'training-io --help'}' for the usage.\n`);
    return 2;
  }
}

/**
 * A reader that stops early (`training-io instances | head`) closes the pipe: the next write fails
 * with EPIPE, which Node raises as an unhandled 'error' event (a stack trace). That reader has what
 * it wanted, so the command ends quietly, with the status a shell gives a process killed by SIGPIPE.
 */
function endQuietlyWhenTheReaderLeaves(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(128 + os.constants.signals.SIGPIPE);
  });
}

if (require.main === module) {
  endQuietlyWhenTheReaderLeaves(process.stdout);
  endQuietlyWhenTheReaderLeaves(process.stderr);
  // Before any command loads what an older Node.js lacks: one line, then a non-zero exit.
  const tooOld = nodeFloorProblem(process.versions.node, floorOf(packageManifest()?.engines?.node));
  if (tooOld) {
    process.stderr.write(`training-io: ${tooOld}\n`);
    process.exitCode = 1;
  } else {
    main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (error: Error) => {
      process.stderr.write(`training-io: ${printableMessage(error.message)}\n`);
      process.exitCode = 1;
    });
  }
}
