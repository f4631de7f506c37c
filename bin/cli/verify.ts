import { parseCommandArgs } from './command-args';
import { existsSync, statSync } from 'node:fs';
import { describeLocation, parseLocation } from './dataset-location';
import { ProgressDisplay } from './progress';
import { UsageError } from './usage-error';
import { LocalDirectorySink } from '../../lambda/io/local-directory';
import { syncRootCopies } from '../../lambda/packing/publish';
import { verifyDataset } from '../../lambda/packing/verify';
import { printable, quoted } from '../../lambda/io/printable';

export const VERIFY_USAGE = `Usage: training-io verify <dataset> [--version V] [--repair] [--images] [--allow-missing] [--endpoint-url URL] [--region R]

Re-read a packed dataset (a local folder or an s3://bucket/prefix/ URI): that manifest.json names
the newest published version (and, on S3, that shards.manifest and index.manifest are its), each
shard's size and CRC32C against it, every record's CRCs, ids and labels, every index file,
RecordIO's index/all.idx, every member list (there, readable, and its files less the listed
failures are the shard's records: the next incremental pack needs them), that records + failures
account for every source file, and that no shard or index in the version's folders is left out of
the manifest.

  --version V          check version V (v00000002-1a2b3c4d) instead of the current one; a
                       version that was never published is a problem (the published ones are listed)
  --repair             first bring the root's copies (manifest.json, shards.manifest, index.manifest) to
                       the newest published version, as the next pack would (a run stopped after publishing)
  --images             also check every record's image, whole, as pack does (a JPEG or PNG the
                       training readers decode): for datasets packed before that check or
                       packed as any content; each record that is not one is a problem naming its file
  --allow-missing      exit 0 even when the manifest lists source files that could not be packed
  --endpoint-url URL   S3 endpoint (an S3-compatible server); path-style addressing
  --region R           S3 region (default: AWS_REGION, then AWS_DEFAULT_REGION)

Exit status: 0 sound, 1 problems found (or files missing, without --allow-missing), 2 bad arguments.
`;

export async function verifyCommand(args: string[], out: NodeJS.WritableStream, err: NodeJS.WriteStream): Promise<number> {
  const { values, positionals, endpoint } = parseCommandArgs({
    args,
    allowPositionals: true,
    strict: true,
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
    out.write(`${problems.length === 0 ? 'ok' : 'FAILED'}: ${report.shardsChecked} shards, ${report.recordsChecked} records, ` +
      `${(report.bytesChecked / 1e6).toFixed(1)} MB checked in ${printable(describeLocation(dataset))}`
      + `${report.manifest?.datasetVersion ? `, version ${report.manifest.datasetVersion}` : ''}\n`);
    return problems.length === 0 ? 0 : 1;
  } finally {
    client?.destroy();
  }
}
