// The floor of reading a folder from Node, for bench/pack-local.ts: the system calls a local pack
// cannot avoid, made from JavaScript with nothing else. The entries of the top folder are dealt
// round-robin to one worker thread per CPU (`os.availableParallelism()`, as the CLI sizes its
// pool); each worker lists its share (readdirSync), stats every file (statSync: the listing's size
// and change time) and reads each one (openSync, readSync into one reused buffer, closeSync), so
// even the listing runs on every core. No planning, framing, CRC or writes: on a tree of many
// folders, a pack takes at least this long on this machine. Run by the bench as
// `node dist/bench/read-floor.js <folder>`; prints the files and bytes read.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

interface FloorWork {
  readonly root: string;
  /** Entries of the root, files or folders. */
  readonly entries: string[];
}

/** Lists the entries (folders recursively), stats and reads every file; returns the files and bytes read. */
function statAndRead({ root, entries }: FloorWork): [number, number] {
  const keys = entries.flatMap((entry) => {
    const top = fs.statSync(`${root}/${entry}`);
    if (!top.isDirectory()) return [entry];
    return fs.readdirSync(`${root}/${entry}`, { recursive: true, withFileTypes: true })
      .filter((dirent) => dirent.isFile())
      .map((dirent) => path.relative(root, path.join(dirent.parentPath, dirent.name)));
  });
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
  return [keys.length, bytes];
}

async function main(): Promise<void> {
  const root = path.resolve(process.argv[2] ?? '.');
  const entries = fs.readdirSync(root);
  const threads = Math.max(1, os.availableParallelism());
  const read = await Promise.all(Array.from({ length: threads }, (_, i) => new Promise<[number, number]>((resolve, reject) => {
    const work: FloorWork = { root, entries: entries.filter((_entry, j) => j % threads === i) };
    const worker = new Worker(__filename, { workerData: work });
    worker.once('message', resolve);
    worker.once('error', reject);
  })));
  const files = read.reduce((sum, [count]) => sum + count, 0);
  const bytes = read.reduce((sum, [, count]) => sum + count, 0);
  process.stdout.write(`${files} files, ${bytes} bytes read on ${threads} threads\n`);
}

if (isMainThread) {
  main().catch((error: Error) => {
    process.stderr.write(`read-floor: ${error.stack ?? error.message}\n`);
    process.exitCode = 1;
  });
} else {
  parentPort!.postMessage(statAndRead(workerData as FloorWork));
}
