// Worker thread of LocalShardPool: writes the shards it is sent, reporting progress in batches.
import { parentPort, workerData } from 'node:worker_threads';
import type { LocalShardWorkerData, WorkerMessage } from './local-shard-pool';
import { shardFormat } from '../formats';
import { LocalDirectorySink, LocalDirectorySource } from '../io/local-directory';
import type { PlannedShard } from '../planning/plan-types';
import { writeShard } from '../shard-writer';

/** Progress is posted every this many files: a message per 5 KB file would cost more than the file. */
const PROGRESS_BATCH = 256;

const data = workerData as LocalShardWorkerData;
const source = new LocalDirectorySource(data.sourceDir);
const sink = new LocalDirectorySink(data.outputDir);
const format = shardFormat(data.format);
const port = parentPort!;

port.on('message', (shard: PlannedShard) => {
  let files = 0;
  let bytes = 0;
  const post = (message: WorkerMessage) => port.postMessage(message);
  writeShard(shard, {
    source, sink, format,
    readConcurrency: data.readConcurrency,
    onFile: (size) => {
      files++;
      bytes += size;
      if (files >= PROGRESS_BATCH) {
        post({ kind: 'progress', files, bytes });
        files = 0;
        bytes = 0;
      }
    },
  }).then((result) => {
    if (files > 0) post({ kind: 'progress', files, bytes });
    post({ kind: 'done', result });
  }, (error: Error) => post({ kind: 'failed', message: error.message }));
});
