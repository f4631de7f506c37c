import * as path from 'node:path';
import { parseCommandArgs, UsageError } from './usage-error';
import { LocalDirectorySink } from '../../lambda/packing/io/local-directory';
import { verifyDataset } from '../../lambda/packing/verify';

export const VERIFY_USAGE = `Usage: training-io verify <output-dir>

Re-read a packed dataset: each shard's size and CRC32C against manifest.json, every record's
CRCs, ids and labels, every index file, RecordIO's index/all.idx, and that records + failures
account for every source file.
Exit status: 0 sound, 1 problems found, 2 bad arguments.
`;

export async function verifyCommand(args: string[], out: NodeJS.WritableStream): Promise<number> {
  const { values, positionals } = parseCommandArgs({ args, allowPositionals: true, strict: true, options: { help: { type: 'boolean', short: 'h' } } }, VERIFY_USAGE);
  if (values.help) {
    out.write(VERIFY_USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`verify takes one packed dataset folder, got ${positionals.length} argument(s)`, VERIFY_USAGE);
  const dir = path.resolve(positionals[0]);
  const report = await verifyDataset(new LocalDirectorySink(dir));
  for (const problem of report.problems) out.write(`problem: ${problem}\n`);
  out.write(`${report.problems.length === 0 ? 'ok' : 'FAILED'}: ${report.shardsChecked} shards, ${report.recordsChecked} records, ` +
    `${(report.bytesChecked / 1e6).toFixed(1)} MB checked in ${dir}\n`);
  return report.problems.length === 0 ? 0 : 1;
}
