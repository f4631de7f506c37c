import { crc32c } from '@node-rs/crc32';
import { crc32cBase64 } from '../../lambda/io/s3-checksum';
import type { ListedFile, ObjectWriter, PackingSink, PackingSource, StoredObject } from '../../lambda/io/storage';
import { ObjectNotFoundError } from '../../lambda/io/storage';

/**
 * An in-memory dataset store for the publishing protocol's fault-injection and property tests
 * (ARCHITECTURE.md "Publishing protocol"): the engine's real pack, publish, copy and prune run over
 * it, and every storage call can be made to fail, to lose its answer, or to crash the run. It has
 * its own clock, which the tests move, as S3's `LastModified` and a file's mtime follow the store's.
 * Not a mock of S3: the S3 and local sinks are tested against a real server and real folders.
 */
export class MemoryStore {
  public readonly objects = new Map<string, { readonly data: Buffer; readonly modified: number }>();
  /** The store's clock, in milliseconds since the epoch. */
  public now = Date.UTC(2026, 10, 1);
  /** The calls made, in order (`put published/00000002.json`), for the tests to say which one a fault hit. */
  public readonly calls: string[] = [];
  private fault: { readonly at: number; readonly mode: FaultMode } | undefined;
  private crashed = false;

  /** The next calls run normally; call number `at` (0-based, counted from now) gets the fault. */
  public injectAt(at: number, mode: FaultMode): void {
    this.calls.length = 0;
    this.fault = { at, mode };
    this.crashed = false;
  }

  /** No fault from now on: a new process, with nothing of the crashed one left. */
  public heal(): void {
    this.fault = undefined;
    this.crashed = false;
    this.calls.length = 0;
  }

  public advanceDays(days: number): void {
    this.now += days * 86_400_000;
  }

  public sink(prefix = ''): PackingSink {
    return new MemorySink(this, prefix);
  }

  /** A store holding the same objects at the same time, with no call made and no fault: a dataset set up once, run from anew. */
  public copy(): MemoryStore {
    const copy = new MemoryStore();
    this.objects.forEach((object, key) => copy.objects.set(key, object));
    copy.now = this.now;
    return copy;
  }

  /** @internal Runs one storage call, applying the fault when it is this call's turn. */
  public call<T>(what: string, effect: () => T): Promise<T> {
    if (this.crashed) return Promise.reject(new CrashError(what));
    const index = this.calls.length;
    this.calls.push(what);
    // Another turn of the event loop per call, as any real store takes: concurrent runs interleave.
    return new Promise((resolve) => setImmediate(resolve)).then(() => {
      if (this.fault?.at !== index) return effect();
      switch (this.fault.mode) {
        case 'fail':
          throw transientError(what);
        case 'lost-answer':
          effect();
          throw transientError(what);
        case 'lost-answer-retried': {
          const first = effect();
          // A part's upload made again replaces the same part (its number): the writer's append stands once.
          return what.startsWith('write ') ? first : effect();
        }
        case 'crash':
          this.crashed = true;
          throw new CrashError(what);
      }
    });
  }
}

/**
 * - `fail`: the call does nothing and rejects as a 503 would (the run's own retries are not modelled: they end the same way);
 * - `lost-answer`: the call takes effect, then rejects (the answer was lost on the way back);
 * - `lost-answer-retried`: the call takes effect, its answer is lost, and the sink's own retry makes
 *   it again and answers that (an S3Sink retries a reset: a create-if-absent then finds its own object, 412);
 * - `crash`: the call does nothing and the process dies: every later call of the run rejects and does nothing.
 */
export type FaultMode = 'fail' | 'lost-answer' | 'lost-answer-retried' | 'crash';
export const FAULT_MODES: readonly FaultMode[] = ['fail', 'lost-answer', 'lost-answer-retried', 'crash'];

/** The process stopped: nothing it does reaches the store any more. */
export class CrashError extends Error {
  constructor(what: string) {
    super(`crashed at ${what}`);
    this.name = 'CrashError';
  }
}

function transientError(what: string): Error {
  return Object.assign(new Error(`SlowDown (HTTP 503) at ${what}`), { name: 'TransientStoreError', $metadata: { httpStatusCode: 503 } });
}

class MemorySink implements PackingSink {
  public readonly uri: string;

  constructor(private readonly store: MemoryStore, private readonly prefix: string) {
    // Named as an S3 prefix, so that the engine writes the channel manifests it writes on S3 and the tests check their copies too.
    this.uri = `s3://memory-store/${prefix}`;
  }

  public async create(key: string): Promise<ObjectWriter> {
    const full = this.prefix + key;
    const chunks: Buffer[] = [];
    await this.store.call(`create ${full}`, () => undefined);
    return {
      write: (data) => this.store.call(`write ${full}`, () => {
        for (const chunk of data) chunks.push(Buffer.from(chunk));
      }),
      complete: () => this.store.call(`complete ${full}`, () => {
        this.store.objects.set(full, { data: Buffer.concat(chunks), modified: this.store.now });
      }),
      abort: () => this.store.call(`abort ${full}`, () => undefined),
    };
  }

  public put(key: string, data: Buffer): Promise<void> {
    const full = this.prefix + key;
    return this.store.call(`put ${full}`, () => {
      this.store.objects.set(full, { data: Buffer.from(data), modified: this.store.now });
    });
  }

  public createIfAbsent(key: string, data: Buffer): Promise<boolean> {
    const full = this.prefix + key;
    return this.store.call(`createIfAbsent ${full}`, () => {
      if (this.store.objects.has(full)) return false;
      this.store.objects.set(full, { data: Buffer.from(data), modified: this.store.now });
      return true;
    });
  }

  public get(key: string): Promise<Buffer> {
    const full = this.prefix + key;
    return this.store.call(`get ${full}`, () => Buffer.from(this.held(full).data));
  }

  public list(prefix: string): Promise<string[]> {
    const full = this.prefix + prefix;
    return this.store.call(`list ${full}`, () => [...this.store.objects.keys()].filter((key) => key.startsWith(full)).sort()
      .map((key) => key.slice(this.prefix.length)));
  }

  public modifiedAt(key: string): Promise<number> {
    const full = this.prefix + key;
    return this.store.call(`modifiedAt ${full}`, () => this.held(full).modified);
  }

  public stat(key: string): Promise<StoredObject> {
    const full = this.prefix + key;
    return this.store.call(`stat ${full}`, () => {
      const { data } = this.held(full);
      return { bytes: data.length, crc32c: crc32cBase64(crc32c(data)) };
    });
  }

  public delete(key: string): Promise<void> {
    const full = this.prefix + key;
    return this.store.call(`delete ${full}`, () => {
      this.store.objects.delete(full);
    });
  }

  public scoped(prefix: string): PackingSink {
    return new MemorySink(this.store, this.prefix + prefix);
  }

  private held(full: string) {
    const object = this.store.objects.get(full);
    if (!object) throw new ObjectNotFoundError(`s3://memory-store/${full}`, 'NoSuchKey', `no object ${full}`);
    return object;
  }
}

/** Source files held in memory: what a test packs. Reads never fail: the faults are the dataset store's. */
export class MemorySource implements PackingSource {
  public readonly uri = 'memory:///source/';
  public readonly files = new Map<string, { readonly data: Buffer; readonly modified: number }>();

  /** A source with the same files, to change without changing this one. */
  public copy(): MemorySource {
    const copy = new MemorySource();
    this.files.forEach((file, key) => copy.files.set(key, file));
    return copy;
  }

  public async *list(): AsyncIterable<ListedFile[]> {
    yield [...this.files].map(([key, file]) => ({ key, size: file.data.length, modified: file.modified }));
  }

  public async read(key: string): Promise<Buffer> {
    const file = this.files.get(key);
    if (!file) throw Object.assign(new Error(`ENOENT: ${key}`), { code: 'ENOENT' });
    return file.data;
  }
}
