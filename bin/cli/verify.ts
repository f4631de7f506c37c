import { parseCommandArgs } from './command-args';
import { existsSync, statSync } from 'node:fs';
import { describeLocation, parseLocation } from './dataset-location';
import { ProgressDisplay } from './progress';
import { UsageError } from './usage-error';
import { LocalDirectorySink } from '../../lambda/io/local-directory';
import { syncRootCopies } from '../../lambda/packing/publish';
import type { PackingSink } from '../../lambda/io/storage';
import { LEFTOVER_MIN_AGE_MS } from '../../lambda/packing/leftovers';
import { DELETES_AT_ONCE, mapLimited } from '../../lambda/packing/limited';
import type { VerifyReport } from '../../lambda/packing/verify';
import { verifyDataset } from '../../lambda/packing/verify';
import { printable, quoted } from '../../lambda/io/printable';

/** The age at which the next publish removes a leftover, in the words of the usage. */
const LEFTOVER_MINUTES = LEFTOVER_MIN_AGE_MS / 60_000;

export const VERIFY_USAGE = `Usage: training-io verify <dataset> [--version V] [--repair] [--images] [--allow-missing] [--endpoint-url URL] [--region R]

Re-read a packed dataset (a local folder or an s3://bucket/prefix/ URI): that manifest.json names
the newest published version (and, on S3, that shards.manifest and index.manifest are its), each
shard's size and CRC32C against it, every record's CRCs, ids and labels, every index file,
RecordIO's index/all.idx, every member list (there, readable, and its files less the listed
failures are the shard's records: the next incremental pack needs them), that records + failures
account for every source file. Objects in the version's shards/, index/ and members/ that its
manifest does not list (a packer attempt's write that landed after the version was published) are
leftovers: each is named in a warning, and does not fail the version; the next publish removes
those over ${LEFTOVER_MINUTES} minutes old.

  --version V          check version V (v00000002-1a2b3c4d) instead of the current one; a
                       version that was never published is a problem (the published ones are listed)
  --repair             first bring the root's copies (manifest.json, shards.manifest, index.manifest) to
                       the newest published version, as the next pack would (a run stopped after publishing);
                       then remove the version's leftovers, whatever their age
  --images             also check every record's image, whole, as pack does (a JPEG or PNG the
                       training readers decode): for datasets packed before that check or
                       packed as any content; each record that is not one is a problem naming its file.
                       In a multi-part dataset every part, by its kind, as pack does: image parts
                       decoded, JSON parts parsed within the JSON limits; each bad part named
  --allow-missing      exit 0 even when the manifest lists source files that could not be packed
  --endpoint-url URL   S3 endpoint (an S3-compatible server); path-style addressing
  --region R           S3 region (default: AWS_REGION, then AWS_DEFAULT_REGION)

Exit status: 0 sound, 1 problems found (or files missing, without --allow-missing), 2 bad arguments.
`;

export async function verifyCommand(args: string[], out: NodeJS.WritableStream, err: NodeJS.WriteStream): Promise<number> {
  const { values, positionals, endpoint } = parseCommandArgs({
    args,
    allowPositionals: true,
    options: {
      'allow-missing': { type: 'boolean', default: false },
      'images': { type: 'boolean', default: false },
      'repair': { type: 'boolean', default: false },
      'version': { type: 'string' },
    },
  }, { usage: VERIFY_USAGE, endpoint: true });
  if (positionals.length !== 1) throw new UsageError(`verify takes one packed dataset (folder or s3:// URI), got ${positionals.length} argument(s)`);
  const dataset = parseLocation('dataset', positionals[0]);
  if (dataset.kind === 'local' && !existsSync(dataset.dir)) throw new UsageError(`dataset folder ${quoted(dataset.dir)} does not exist`);
  if (dataset.kind === 'local' && !statSync(dataset.dir).isDirectory()) throw new UsageError(`dataset ${quoted(dataset.dir)} is not a folder`);
  const s3 = dataset.kind === 's3' ? await import('./s3-storage') : undefined;
  const client = s3?.createS3Client(endpoint);
  try {
    const reader = dataset.kind === 'local' ? new LocalDirectorySink(dataset.dir) : s3!.openS3Sink(dataset, client!);
    if (values.repair) {
      const repaired = await syncRootCopies(reader);
      out.write(repaired.length > 0 ? `repaired: ${repaired.join(', ')} now name the newest published version\n` : 'repair: the root\'s copies were current\n');
    }
    const progress = new ProgressDisplay(err, 'verifying', 'shards');
    const report = await verifyDataset(reader, {
      version: values.version, images: values.images,
      onProgress: (state) => progress.update({ filesDone: state.shardsDone, totalFiles: state.totalShards, bytesDone: state.bytesDone, totalBytes: state.totalBytes }),
    }).finally(() => progress.finish());
    const failures = report.manifest?.failures ?? [];
    const missing = failures.length > 0 && !values['allow-missing'];
    const problems = [
      ...report.problems,
      ...(missing ? [`${failures.length} source file(s) are not in the dataset (the manifest's failures; pass --allow-missing to accept that): `
        + `${failures.slice(0, 10).map((f) => `${f.key} (${f.reason})`).join(', ')}${failures.length > 10 ? ', …' : ''}`] : []),
    ];
    for (const problem of problems) out.write(`problem: ${printable(problem)}\n`);
    await reportLeftovers(reader, report, values.repair, out);
    out.write(`${problems.length === 0 ? 'ok' : 'FAILED'}: ${report.shardsChecked} shards, ${report.recordsChecked} records, ` +
      `${(report.bytesChecked / 1e6).toFixed(1)} MB checked in ${printable(describeLocation(dataset))}`
      + `${report.manifest?.datasetVersion ? `, version ${report.manifest.datasetVersion}` : ''}\n`);
    return problems.length === 0 ? 0 : 1;
  } finally {
    client?.destroy();
  }
}

/** Most leftovers named one by one; the rest are counted. */
const LEFTOVERS_NAMED = 20;

/**
 * Names the version's leftovers in warnings, or with `--repair` removes them. Any age will do here:
 * the manifest was published without them, so no reader opens them; the next publish keeps to its
 * age rule (lambda/packing/leftovers.ts) only so that what it removes is never written again.
 */
async function reportLeftovers(sink: PackingSink, report: VerifyReport, repair: boolean, out: NodeJS.WritableStream): Promise<void> {
  const leftovers = report.leftovers ?? [];
  if (leftovers.length === 0) return;
  // Keys escaped: a leftover's name is whatever landed in the folder.
  const named = leftovers.slice(0, LEFTOVERS_NAMED).map(printable).join(', ') + (leftovers.length > LEFTOVERS_NAMED ? `, … (${leftovers.length - LEFTOVERS_NAMED} more)` : '');
  if (repair) {
    await mapLimited(leftovers, DELETES_AT_ONCE, (key) => sink.delete(key));
    out.write(`repaired: removed ${leftovers.length} leftover(s) that ${report.manifest!.datasetVersion}'s manifest does not list: ${named}\n`);
    return;
  }
  out.write(`warning: ${leftovers.length} leftover(s) in ${report.manifest!.datasetVersion}'s folder that its manifest does not list `
    + `(a packer attempt's write that landed after the version was published; readers of the manifest never open them, `
    + `a reader of the folder would): ${named}; verify --repair removes them, the next publish those over ${LEFTOVER_MINUTES} minutes old\n`);
}
