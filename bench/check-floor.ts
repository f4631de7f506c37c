// The image check's cost alone, for `bench/pack-local.ts --check`: every JPEG of a folder checked in
// memory, no listing, reading, framing or writes in the timed part. `js` runs the pack's own check
// (lambda/packing/image-check: every scan parsed symbol by symbol); `sharp` the cheapest native full
// parse found through sharp, libjpeg-turbo's (mozjpeg's) decoder: a full decode to raw pixels with
// `failOn: 'warning'`. Cheaper sharp calls, a resize that lets libjpeg decode at 1/8 scale (DC-only
// IDCT), accept a small JPEG cut short with FF D9 appended, so they are no floor for this check;
// the program says, for each mode, whether it refuses such a file made from the folder's first one.
// As the pack's pool: one worker thread per CPU (`os.availableParallelism()`), the files dealt
// round-robin; each worker reads its share into memory, then all check at once, timed from the main
// thread. `node dist/bench/check-floor.js <folder> js|sharp`; prints one line:
// `<files> files <seconds> s <cpuSeconds> cpu <threads> threads refuses-cut yes|no`.
import { readdirSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { checkImage, READER_RULES } from '../lambda/packing/image-check/image-check';
import { loadSharp } from '../lambda/packing/preprocess/load-sharp';

type Mode = 'js' | 'sharp';

interface CheckWork {
  readonly mode: Mode;
  readonly files: string[];
}

/** Checks one JPEG, throwing when it would be refused. */
function checker(mode: Mode): (data: Buffer) => Promise<unknown> {
  if (mode === 'js') return async (data) => checkImage(data, READER_RULES);
  const sharp = loadSharp();
  return (data) => sharp(data, { failOn: 'warning' }).raw().toBuffer();
}

/** A JPEG whose entropy-coded data stops at 60 % of the file, then ends with FF D9: it must be refused. */
function cutShort(jpeg: Buffer): Buffer {
  return Buffer.concat([jpeg.subarray(0, Math.floor(jpeg.length * 0.6)), Buffer.from([0xff, 0xd9])]);
}

async function refusesCut(mode: Mode, jpeg: Buffer): Promise<boolean> {
  const check = checker(mode);
  await check(jpeg); // the whole file passes: the refusal below is for the cut, not the image
  return check(cutShort(jpeg)).then(() => false, () => true);
}

/** In a worker: reads its share, says so, waits for the go, checks every file, reports the count. */
function workerMain({ mode, files }: CheckWork): void {
  const data = files.map((file) => readFileSync(file));
  const check = checker(mode);
  parentPort!.once('message', () => {
    void (async () => {
      for (const jpeg of data) await check(jpeg);
      parentPort!.postMessage(data.length);
    })();
  });
  parentPort!.postMessage('ready');
}

async function main(): Promise<void> {
  const [folder, mode] = process.argv.slice(2) as [string, Mode];
  if (mode !== 'js' && mode !== 'sharp') throw new Error(`mode '${mode}' is neither js nor sharp`);
  const threads = Math.max(1, os.availableParallelism());
  process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, threads)); // as the CLI: sharp works on libuv's pool
  const files = readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.startsWith('.')).map((entry) => path.join(entry.parentPath, entry.name)).sort();
  const refuses = await refusesCut(mode, readFileSync(files[0]));
  const workers = Array.from({ length: threads }, (_, t) => new Worker(__filename, {
    workerData: { mode, files: files.filter((_file, i) => i % threads === t) } satisfies CheckWork,
  }));
  await Promise.all(workers.map((worker) => new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  })));
  const cpuBefore = process.cpuUsage();
  const start = process.hrtime.bigint();
  const done = await Promise.all(workers.map((worker) => new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.postMessage('go');
  })));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  await Promise.all(workers.map((worker) => worker.terminate()));
  const checked = done.reduce((a, b) => a + b, 0);
  process.stdout.write(`${checked} files ${seconds.toFixed(3)} s ${((cpu.user + cpu.system) / 1e6).toFixed(3)} cpu ${threads} threads refuses-cut ${refuses ? 'yes' : 'no'}\n`);
}

if (isMainThread) {
  main().catch((error: Error) => {
    process.stderr.write(`check-floor: ${error.stack ?? error.message}\n`);
    process.exitCode = 1;
  });
} else {
  workerMain(workerData as CheckWork);
}
