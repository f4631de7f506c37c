import type { ListedFile, PackingSource, ScratchBuffer } from '../../io/storage';
import type { ManifestFailure } from '../manifest';
import { sampleKeyOf } from '../../../lib/contract/sample-parts';
import type { LabelTable } from './label-table';

/**
 * A source whose listing leaves out the files the label table has no row for, each kept as a listed
 * failure with its reason (not planned, not read, not labelled -1): the run then fails or, with
 * `allowMissing`, publishes without them, as for any file that cannot be packed. A label file that
 * lies below the source is no sample: it is left out, not a failure. The failures are the files'; in a
 * multi-part dataset the run lists them once per sample (unlabelledSamples, run.ts versionSummary).
 */
export class LabelledSource implements PackingSource {
  public readonly uri: string;
  public readonly readInto?: (key: string, listedSize: number, scratch: ScratchBuffer) => Buffer;
  private failures: ManifestFailure[] = [];

  constructor(private readonly source: PackingSource, private readonly table: LabelTable) {
    this.uri = source.uri;
    if (source.readInto) this.readInto = source.readInto.bind(source);
  }

  /** The listed files of the last listing that no row labels, with why: the version's failures besides the packers'. */
  public get unlabelled(): readonly ManifestFailure[] {
    return this.failures;
  }

  public async *list(): AsyncIterable<ListedFile[]> {
    this.failures = [];
    const ownKey = keyBelow(this.source.uri, this.table.uri);
    for await (const batch of this.source.list()) {
      const kept = batch.filter((file) => {
        if (file.key === ownKey) return false;
        if (this.table.labelOfFile(file.key) !== undefined) return true;
        const sample = sampleKeyOf(file.key).key;
        this.failures.push({
          key: file.key,
          reason: unlabelledReason(this.table.uri, sample),
        });
        return false;
      });
      if (kept.length > 0) yield kept;
    }
  }

  public read(key: string, listedSize?: number): Promise<Buffer> {
    return this.source.read(key, listedSize);
  }
}

/** Why a sample's files are failures: the same words for each file of it, so that a multi-part sample's are said once (unlabelledSamples). */
function unlabelledReason(labelFile: string, sample: string): string {
  return `no row of the label file ${labelFile} labels its sample '${sample}': add a row for it (key,label: ${sample},<class>) `
    + 'or leave its files out with an exclude pattern';
}

/**
 * The unlabelled files of a multi-part dataset as its failures: one per sample, keyed by the sample as
 * groupSamples' failures are, since each sample is one record or one failure (manifest.ts checkTotals).
 * A row labels a whole sample, so a sample's files are all labelled or all failures here, never split
 * between this list and the grouped samples.
 */
export function unlabelledSamples(unlabelled: readonly ManifestFailure[]): ManifestFailure[] {
  const bySample = new Map<string, ManifestFailure>();
  for (const failure of unlabelled) {
    const sample = sampleKeyOf(failure.key).key;
    if (!bySample.has(sample)) bySample.set(sample, { key: sample, reason: failure.reason });
  }
  return [...bySample.values()];
}

/** The key of `uri` below the source's root `root`, or undefined when it lies elsewhere (a file:// URL's path is percent-encoded, a key is not). */
function keyBelow(root: string, uri: string): string | undefined {
  if (!uri.startsWith(root)) return undefined;
  const rest = uri.slice(root.length);
  return root.startsWith('file:') ? decodeURIComponent(rest) : rest;
}
