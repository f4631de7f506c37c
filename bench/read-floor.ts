// The floor of reading a folder from Node, for bench/pack-local.ts: the system calls a local pack
// cannot avoid, made from JavaScript with nothing else. The files are listed with readdirSync, then
// split over one worker thread per CPU (`os.availableParallelism()`, as the CLI sizes its pool),
// each of which stats its files (statSync: the listing's size and change time) and reads each one
// (openSync, readSync into one reused buffer, closeSync). No planning, framing, CRC or writes: a
// pack takes at least this long on this machine. Run by the bench as
// `node dist/bench/read-floor.js <folder>`; prints the files and bytes read.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

interface FloorWork {
  readonly root: string;
  readonly keys: string[];
}

/** Stats and reads every file; returns the bytes read. */
function statAndRead({ root, keys }: FloorWork): number {
  const sizes = keys.map((key) => fs.statSync(`${root}/${key}`).size);
  let buffer = Buffer.allocUnsafe(1024 * 1024);
  let bytes = 0;
  keys.forEach((key, i) => {
    if (buffer.length < sizes[i] + 1) buffer = Buffer.allocUnsafe(2 * (sizes[i] + 1));
    const fd = fs.openSync(`${root}/${key}`, 'r');
    try {
      bytes += fs.readSync(fd, buffer, 0, sizes[i] + 1, 0);
    } finally {
      fs.closeSync(fd);
    }
  });
  return bytes;
}

async function main(): Promise<void> {
  const root = path.resolve(process.argv[2] ?? '.');
  const keys = fs.readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
  const threads = Math.max(1, os.availableParallelism());
  const per = Math.ceil(keys.length / threads);
  const read = await Promise.all(Array.from({ length: threads }, (_, i) => new Promise<number>((resolve, reject) => {
    const work: FloorWork = { root, keys: keys.slice(i * per, (i + 1) * per) };
    const worker = new Worker(__filename, { workerData: work });
    worker.once('message', resolve);
    worker.once('error', reject);
  })));
  process.stdout.write(`${keys.length} files, ${read.reduce((sum, bytes) => sum + bytes, 0)} bytes read on ${threads} threads\n`);
}

if (isMainThread) {
  main().catch((error: Error) => {
    process.stderr.write(`read-floor: ${error.stack ?? error.message}\n`);
    process.exitCode = 1;
  });
} else {
  parentPort!.postMessage(statAndRead(workerData as FloorWork));
}
