import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ListedFile } from '../../io/storage';
import { FingerprintHasher, sourceFingerprint } from '../manifest';
import { compareCodePointOrder, sortByKeyInCodePointOrder } from '../../io/key-order';
import { checkFile } from '../planning/plan-shards';
import type { RecordBytes } from '../planning/plan-types';
import { EntryFileWriter, readEntryFile } from './entry-file';

/** Buffer of each entry file open at once: a merge reads many runs at a time. */
const ENTRY_BUFFER_BYTES = 64 * 1024;

/**
 * Gathers a source's listing, batch by batch, holding at most `runFiles` files: beyond, each run
 * of that many is sorted by key and written to a scratch folder, and the listing is read back as
 * one merge of the runs (an external merge sort). A listing that fits stays in memory, as is.
 */
export class ListingCollector {
  private run: ListedFile[] = [];
  private readonly runs: string[] = [];
  private folder: string | undefined;
  private files = 0;
  private bytes = 0;
  private framedBytes = 0;
  /** Hashes the listing as it comes while it comes in key order; dropped at the first key out of order. */
  private hasher: FingerprintHasher | undefined = new FingerprintHasher();
  private lastKey: string | undefined;
  /** The listing's fingerprint, once known. */
  private fingerprint: string | undefined;

  /**
   * @param onFirstSpill called once, when the listing first turns out too large to hold
   * @param recordBytes a file's bytes in a shard, summed in `recordBytes` for the plan (default: its size)
   */
  constructor(private readonly runFiles: number, private readonly scratchDirectory: string, private readonly onFirstSpill?: () => void,
    private readonly recordBytesOf?: RecordBytes) {}

  /** @throws PlanError for a file without a key or with a size that is not a whole number of bytes */
  public add(batch: readonly ListedFile[]): void {
    for (const file of batch) {
      // Checked here, so that the totals the plan starts from are exact.
      const size = checkFile(file, this.files++);
      if (this.hasher) this.hashInOrder(file);
      this.bytes += size;
      this.framedBytes += this.recordBytesOf ? this.recordBytesOf(file.key, size) : size;
      this.run.push(file);
      if (this.run.length >= this.runFiles) this.spill();
    }
  }

  /**
   * The listing's fingerprint (see sourceFingerprint), when every file came in key order, as folder
   * walks and S3 listings hand them over: hashed as they came, so it is ready when planning starts
   * and nothing is sorted or hashed again. With worker threads statting the files, the listing
   * thread hashes while it waits for them. Undefined when a key came out of order and no
   * fingerprint was computed since ({@link fingerprintOf}).
   */
  public inOrderFingerprint(): string | undefined {
    if (this.hasher) {
      this.fingerprint = this.hasher.digest();
      this.hasher = undefined;
    }
    return this.fingerprint;
  }

  /**
   * The listing's fingerprint, `files` being the listing held in memory (as taken, or sorted):
   * hashed as it came when it came in key order, else computed from `files` once and kept.
   */
  public fingerprintOf(files: readonly ListedFile[]): string {
    this.fingerprint = this.inOrderFingerprint() ?? sourceFingerprint(files);
    return this.fingerprint;
  }

  /** Files added so far. */
  public get count(): number {
    return this.files;
  }

  /** Sum of the listed sizes (as listed: the planner checks each). */
  public get totalBytes(): number {
    return this.bytes;
  }

  /** Sum of the files' bytes in shards (`recordBytes` of each; their sizes without it). */
  public get recordBytes(): number {
    return this.framedBytes;
  }

  /**
   * The listing, when it was small enough to stay in memory, handed over: the collector lets go
   * of it, so the caller decides how long it lives. Undefined once written to disk.
   */
  public takeInMemory(): ListedFile[] | undefined {
    if (this.runs.length > 0) return undefined;
    const files = this.run;
    this.run = [];
    return files;
  }

  /** Every file in key order (code points); equal keys next to each other. */
  public* sorted(): Generator<ListedFile> {
    if (this.runs.length === 0) {
      yield* sortByKeyInCodePointOrder(this.run);
      return;
    }
    if (this.run.length > 0) this.spill();
    yield* mergeRuns(this.runs.map((run) => readEntryFile(run, ENTRY_BUFFER_BYTES)));
  }

  /** A new file in the scratch folder, for data derived from the listing (removed by {@link dispose}). */
  public scratchFile(name: string): string {
    this.folder ??= fs.mkdtempSync(path.join(this.scratchDirectory, 'training-io-listing-'));
    return path.join(this.folder, name);
  }

  /** Removes the scratch folder and lets go of the files held. */
  public dispose(): void {
    this.run = [];
    if (this.folder) fs.rmSync(this.folder, { recursive: true, force: true });
    this.folder = undefined;
  }

  private hashInOrder(file: ListedFile): void {
    // Equal keys may follow each other: a sort keeps them in the order they came (it is stable).
    if (this.lastKey !== undefined && compareCodePointOrder(this.lastKey, file.key) > 0) {
      this.hasher = undefined;
      return;
    }
    this.lastKey = file.key;
    this.hasher!.add(file);
  }

  private spill(): void {
    if (this.runs.length === 0) this.onFirstSpill?.();
    const writer = new EntryFileWriter(this.scratchFile(`run-${this.runs.length}`), ENTRY_BUFFER_BYTES);
    try {
      for (const file of sortByKeyInCodePointOrder(this.run)) writer.write(file);
    } finally {
      writer.close();
    }
    this.runs.push(writer.path);
    this.run = [];
  }
}

/** K-way merge of sorted runs with a binary heap of their heads. */
function* mergeRuns(runs: Array<Iterator<ListedFile>>): Generator<ListedFile> {
  const heads: Array<{ file: ListedFile; run: Iterator<ListedFile> }> = [];
  const before = (a: number, b: number) => compareCodePointOrder(heads[a].file.key, heads[b].file.key) < 0;
  const siftDown = (from: number) => {
    let position = from;
    for (;;) {
      const left = 2 * position + 1;
      if (left >= heads.length) return;
      const child = left + 1 < heads.length && before(left + 1, left) ? left + 1 : left;
      if (!before(child, position)) return;
      [heads[position], heads[child]] = [heads[child], heads[position]];
      position = child;
    }
  };
  for (const run of runs) {
    const first = run.next();
    if (!first.done) heads.push({ file: first.value, run });
  }
  for (let i = (heads.length >> 1) - 1; i >= 0; i--) siftDown(i);
  while (heads.length > 0) {
    const head = heads[0];
    yield head.file;
    const next = head.run.next();
    if (next.done) {
      const last = heads.pop()!;
      if (heads.length === 0) return;
      heads[0] = last;
    } else {
      head.file = next.value;
    }
    siftDown(0);
  }
}
