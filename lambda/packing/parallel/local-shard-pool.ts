import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ShardFormatName } from '../formats/shard-format';
import type { PlannedShard } from '../planning/plan-types';
import type { ShardResult } from '../shard-writer';

/**
 * A small young generation per worker: packing allocates one short-lived buffer per file, and
 * V8's default (16 MiB semi-spaces) lets each worker hold far more garbage than it needs between
 * scavenges. Measured on 100,000 files of 2–8 KB: peak RSS 344 → 291 MB, time unchanged or better.
 */
const YOUNG_GENERATION_MB = 12;

/** What each worker needs to write shards of a local folder into a local folder. */
export interface LocalShardWorkerData {
  readonly sourceDir: string;
  readonly outputDir: string;
  readonly format: ShardFormatName;
  readonly readConcurrency: number;
}

/** Work for a worker: write a shard, or stat files for the listing. */
export type WorkerRequest =
  | { readonly kind: 'write'; readonly shard: PlannedShard }
  | { readonly kind: 'stat'; readonly paths: string[] };

/** Messages from a worker. */
export type WorkerMessage =
  | { readonly kind: 'progress'; readonly files: number; readonly bytes: number }
  | { readonly kind: 'done'; readonly result: ShardResult }
  | { readonly kind: 'stats'; readonly stats: Float64Array }
  | { readonly kind: 'failed'; readonly message: string };

/**
 * Lists and writes shards of a local folder on worker threads, one task per worker at a time.
 * Reading many small local files is system-call bound on one core; a worker per core packs as
 * many shards at once (the Lambda path needs none of this: there each packer writes one shard).
 */
export class LocalShardPool {
  private readonly idle: Worker[] = [];
  private readonly waiting: Array<(worker: Worker) => void> = [];
  private readonly workers: Worker[] = [];

  /** Workers start on the first task, so a run that fails before listing starts none. */
  constructor(private readonly data: LocalShardWorkerData, private readonly threads: number) {}

  /** Writes one shard on the next free worker; `onFiles` hears of the input files it handled. */
  public async write(shard: PlannedShard, onFiles: (bytes: number, files: number) => void): Promise<ShardResult> {
    const message = await this.run({ kind: 'write', shard }, `writing ${shard.name}`, onFiles);
    return (message as Extract<WorkerMessage, { kind: 'done' }>).result;
  }

  /** A `StatFiles` for the source's listing: the paths split evenly over the workers. */
  public readonly statFiles = async (paths: string[]): Promise<Float64Array> => {
    const parts = Math.max(1, Math.min(this.threads, Math.ceil(paths.length / 1024)));
    const per = Math.ceil(paths.length / parts);
    const results = await Promise.all(Array.from({ length: parts }, (_, i) =>
      this.run({ kind: 'stat', paths: paths.slice(i * per, (i + 1) * per) }, 'listing the source')));
    const stats = new Float64Array(2 * paths.length);
    results.forEach((message, i) => stats.set((message as Extract<WorkerMessage, { kind: 'stats' }>).stats, 2 * i * per));
    return stats;
  };

  /** Runs one request on the next free worker; resolves with its final message. */
  private async run(request: WorkerRequest, what: string, onFiles?: (bytes: number, files: number) => void): Promise<WorkerMessage> {
    const worker = await this.acquire();
    let healthy = true;
    try {
      return await new Promise<WorkerMessage>((resolve, reject) => {
        const stop = () => {
          worker.off('message', onMessage);
          worker.off('error', onError);
          worker.off('exit', onExit);
        };
        const onMessage = (message: WorkerMessage) => {
          if (message.kind === 'progress') {
            onFiles?.(message.bytes, message.files);
            return;
          }
          stop();
          if (message.kind === 'failed') reject(new Error(message.message));
          else resolve(message);
        };
        // A worker that crashed or exited is never handed another task.
        const onError = (error: Error) => {
          healthy = false;
          stop();
          reject(error);
        };
        const onExit = (code: number) => onError(new Error(`shard worker exited (code ${code}) while ${what}`));
        worker.on('message', onMessage);
        worker.on('error', onError);
        worker.on('exit', onExit);
        worker.postMessage(request);
      });
    } finally {
      this.release(worker, healthy);
    }
  }

  public async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }

  private acquire(): Promise<Worker> {
    const free = this.idle.pop();
    if (free) return Promise.resolve(free);
    if (this.workers.length < Math.max(1, this.threads)) {
      const { file, execArgv } = workerEntry();
      const worker = new Worker(file, { workerData: this.data, execArgv, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
      this.workers.push(worker);
      return Promise.resolve(worker);
    }
    return new Promise<Worker>((resolve) => this.waiting.push(resolve));
  }

  private release(worker: Worker, healthy: boolean): void {
    if (!healthy) {
      this.workers.splice(this.workers.indexOf(worker), 1);
      void worker.terminate();
      // A replacement starts for whoever waits.
      const next = this.waiting.shift();
      if (next) void this.acquire().then(next);
      return;
    }
    const next = this.waiting.shift();
    if (next) next(worker);
    else this.idle.push(worker);
  }
}

/** The compiled worker next to this file, or its TypeScript source under ts-node/ts-jest. */
function workerEntry(): { file: string; execArgv: string[] } {
  const compiled = path.join(__dirname, 'local-shard-worker.js');
  if (existsSync(compiled)) return { file: compiled, execArgv: [] };
  return { file: path.join(__dirname, 'local-shard-worker.ts'), execArgv: ['--require', 'ts-node/register/transpile-only'] };
}
