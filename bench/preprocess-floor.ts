// sharp's own floor for bench/pack-preprocess.ts: resizes every image of a folder with the settings
// of `training-io pack --resize N --quality Q` (EXIF orientation, shorter side N, never enlarged,
// sRGB, JPEG at Q) and does nothing else: no listing beyond a readdir, no records, no writes. On one
// CPU in this thread; on more, one worker thread per CPU, each with its share of the files, as the
// packer's pool does. `node preprocess-floor.js <folder> <threads> <N> <Q>`; prints the images done.
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { loadSharp } from '../lambda/packing/preprocess/load-sharp';

interface FloorWork {
  readonly files: string[];
  readonly side: number;
  readonly quality: number;
}

async function resizeAll(work: FloorWork): Promise<number> {
  const sharp = loadSharp();
  for (const file of work.files) {
    await sharp(readFileSync(file), { failOn: 'truncated' })
      .rotate()
      .resize({ width: work.side, height: work.side, fit: 'outside', withoutEnlargement: true })
      .toColourspace('srgb')
      .jpeg({ quality: work.quality })
      .toBuffer();
  }
  return work.files.length;
}

async function main(): Promise<void> {
  const [folder, threadsArg, sideArg, qualityArg] = process.argv.slice(2);
  const threads = Number(threadsArg);
  // As the CLI does: libuv's pool (4 threads by default), which sharp works on, gets a thread per worker.
  process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, threads));
  const files = readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name)).sort();
  const side = Number(sideArg);
  const quality = Number(qualityArg);
  if (threads <= 1) {
    process.stdout.write(`${await resizeAll({ files, side, quality })}\n`);
    return;
  }
  const shares = Array.from({ length: threads }, (_, t) => files.filter((_file, i) => i % threads === t));
  const done = await Promise.all(shares.map((share) => new Promise<number>((resolve, reject) => {
    const worker = new Worker(__filename, { workerData: { files: share, side, quality } satisfies FloorWork });
    worker.once('message', resolve);
    worker.once('error', reject);
  })));
  process.stdout.write(`${done.reduce((a, b) => a + b, 0)}\n`);
}

if (isMainThread) {
  main().catch((error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  });
} else {
  void resizeAll(workerData as FloorWork).then((count) => parentPort!.postMessage(count));
}
