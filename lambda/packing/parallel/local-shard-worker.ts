// Worker thread of LocalShardPool: stats files for the listing and writes the shards it is sent,
// reporting progress in batches.
import { parentPort, workerData } from 'node:worker_threads';
import type { LocalShardWorkerData, WorkerMessage, WorkerRequest } from './local-shard-pool';
import { shardFormat } from '../formats';
import { LocalDirectorySink, LocalDirectorySource } from '../../io/local-directory';
import { writeShardWithMembers } from '../shard-writer';
import { fromShardMessage } from './shard-message';

/** Progress is posted every this many files: a message per 5 KB file would cost more than the file. */
const PROGRESS_BATCH = 256;

const data = workerData as LocalShardWorkerData;
const source = new LocalDirectorySource(data.sourceDir, { followSymlinks: data.followSymlinks });
const sink = new LocalDirectorySink(data.outputDir);
const format = shardFormat(data.format);
const port = parentPort!;

port.on('message', (request: WorkerRequest) => {
  const { id } = request;
  const post = (message: WorkerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  if (request.kind === 'stat') {
    const stats = source.stat(request.keys);
    post({ id, kind: 'stats', stats }, [stats.buffer as ArrayBuffer]);
    return;
  }
  let files = 0;
  let bytes = 0;
  // Inside the promise: a message that cannot be read fails its task, not the worker.
  Promise.resolve(request.shard).then((message) => writeShardWithMembers(fromShardMessage(message), {
    source, sink: sink.scoped(request.prefix), format,
    readConcurrency: data.readConcurrency,
    preprocessing: data.preprocessing,
    checkImages: data.checkImages,
    onFile: (size) => {
      files++;
      bytes += size;
      if (files >= PROGRESS_BATCH) {
        post({ id, kind: 'progress', files, bytes });
        files = 0;
        bytes = 0;
      }
    },
  })).then((result) => {
    if (files > 0) post({ id, kind: 'progress', files, bytes });
    post({ id, kind: 'done', result });
  }, (error: Error) => post({ id, kind: 'failed', message: error.message }));
});
