import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ShardFormatName } from '../formats/shard-format';
import type { PlannedShard } from '../planning/plan-types';
import type { ShardResult } from '../shard-writer';

/** What each worker needs to write shards of a local folder into a local folder. */
export interface LocalShardWorkerData {
  readonly sourceDir: string;
  readonly outputDir: string;
  readonly format: ShardFormatName;
  readonly readConcurrency: number;
}

/** Messages from a worker. */
export type WorkerMessage =
  | { readonly kind: 'progress'; readonly files: number; readonly bytes: number }
  | { readonly kind: 'done'; readonly result: ShardResult }
  | { readonly kind: 'failed'; readonly message: string };

/**
 * Writes shards of a local folder on worker threads, one shard per worker at a time. Reading
 * many small local files is system-call bound on one core; a worker per core packs as many
 * shards at once (the Lambda path needs none of this: there each packer writes one shard).
 */
export class LocalShardPool {
  private readonly idle: Worker[] = [];
  private readonly waiting: Array<(worker: Worker) => void> = [];
  private readonly workers: Worker[];

  constructor(data: LocalShardWorkerData, threads: number) {
    const { file, execArgv } = workerEntry();
    this.workers = Array.from({ length: Math.max(1, threads) }, () => new Worker(file, { workerData: data, execArgv }));
    this.idle.push(...this.workers);
  }

  /** Writes one shard on the next free worker; `onFile` hears of every input file it handled. */
  public async write(shard: PlannedShard, onFile: (bytes: number, files: number) => void): Promise<ShardResult> {
    const worker = this.idle.pop() ?? await new Promise<Worker>((resolve) => this.waiting.push(resolve));
    try {
      return await new Promise<ShardResult>((resolve, reject) => {
        const onMessage = (message: WorkerMessage) => {
          if (message.kind === 'progress') {
            onFile(message.bytes, message.files);
            return;
          }
          worker.off('message', onMessage);
          worker.off('error', onError);
          if (message.kind === 'done') resolve(message.result);
          else reject(new Error(message.message));
        };
        const onError = (error: Error) => {
          worker.off('message', onMessage);
          reject(error);
        };
        worker.on('message', onMessage);
        worker.once('error', onError);
        worker.postMessage(shard);
      });
    } finally {
      const next = this.waiting.shift();
      if (next) next(worker);
      else this.idle.push(worker);
    }
  }

  public async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}

/** The compiled worker next to this file, or its TypeScript source under ts-node/ts-jest. */
function workerEntry(): { file: string; execArgv: string[] } {
  const compiled = path.join(__dirname, 'local-shard-worker.js');
  if (existsSync(compiled)) return { file: compiled, execArgv: [] };
  return { file: path.join(__dirname, 'local-shard-worker.ts'), execArgv: ['--require', 'ts-node/register/transpile-only'] };
}
