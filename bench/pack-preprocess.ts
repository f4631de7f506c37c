// Benchmark: `training-io pack --resize 256 --quality 90` (image preprocessing, issue 26) against
// sharp's own floor (bench/preprocess-floor.ts: the same resize and re-encode of the same files in
// one process, nothing else; a worker thread per CPU for all CPUs), on 1 CPU (`taskset -c 0`: the CLI
// then packs in its own thread) and on all, runs taking turns. Images are generated once with sharp
// from a seeded PRNG: smooth colour fields with fine texture, 400-1,000 x 500-1,300 px, JPEG quality 92.
// Prints images/s (best of the runs), CPU per image, pack / floor on all CPUs (target >= 0.85), the speed-up of all
// CPUs over one (target >= 1.8 on 2), the shards' bytes per image / the originals' (target <= 0.4),
// peak RSS and the load average. Not a test: `npm run bench:pack-preprocess [-- --images N --runs N --dir D]`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { loadSharp } from '../lambda/packing/preprocess/load-sharp';

const CLI = path.join(__dirname, '..', 'bin', 'training-io.js');
const FLOOR = path.join(__dirname, 'preprocess-floor.js');
const SIDE = 256;
const QUALITY = 90;
const CLASSES = 10;
const CPUS = os.availableParallelism();

/** xorshift32: the same images on every machine. */
function prng(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return state;
  };
}

/** `count` JPEGs under `dir/class-N/`, made once (a `.complete` file records their bytes). */
async function generate(dir: string, count: number): Promise<number> {
  // Beside the folder, not in it: the pack would take it for an image at the root.
  const marker = `${dir}.complete`;
  if (existsSync(marker) && readFileSync(marker, 'utf8').startsWith(`${count} `)) return Number(readFileSync(marker, 'utf8').split(' ')[1]);
  rmSync(dir, { recursive: true, force: true });
  const sharp = loadSharp();
  const next = prng(26);
  const texture = Buffer.alloc(64 * 64 * 3);
  for (let i = 0; i < texture.length; i++) texture[i] = next() & 0xff;
  let total = 0;
  for (let i = 0; i < count; i++) {
    const width = 400 + (next() % 601);
    const height = 500 + (next() % 801);
    const field = Buffer.alloc(12 * 15 * 3);
    for (let j = 0; j < field.length; j++) field[j] = next() & 0xff;
    const textured = await sharp(texture, { raw: { width: 64, height: 64, channels: 3 } }).png().toBuffer();
    const data = await sharp(field, { raw: { width: 12, height: 15, channels: 3 } })
      .resize({ width, height, fit: 'fill', kernel: 'cubic' })
      .composite([{ input: textured, tile: true, blend: 'soft-light' }])
      .jpeg({ quality: 92 })
      .toBuffer();
    const classDir = path.join(dir, `class-${i % CLASSES}`);
    mkdirSync(classDir, { recursive: true });
    writeFileSync(path.join(classDir, `img-${String(i).padStart(5, '0')}.jpg`), data);
    total += data.length;
  }
  writeFileSync(marker, `${count} ${total}`);
  return total;
}

interface Timing {
  readonly seconds: number;
  /** User + system: on a machine other jobs load, what each image cost says more than the wall time. */
  readonly cpuSeconds: number;
  readonly peakRssMB: number;
}

/** Runs a command under GNU time, pinned with taskset: wall and CPU seconds, peak RSS. */
function timed(cpus: string, command: string, args: string[]): Timing {
  const report = path.join(os.tmpdir(), `training-io-bench-time-${process.pid}.txt`);
  execFileSync('taskset', ['-c', cpus, '/usr/bin/time', '-f', '%e %U %S %M', '-o', report, command, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  const [seconds, user, system, kib] = readFileSync(report, 'utf8').trim().split(/\s+/).map(Number);
  rmSync(report, { force: true });
  return { seconds, cpuSeconds: user + system, peakRssMB: kib / 1024 };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: {
    images: { type: 'string', default: '1000' }, runs: { type: 'string', default: '3' },
    dir: { type: 'string', default: path.join(os.tmpdir(), 'training-io-bench-preprocess') },
  } });
  const images = Number(values.images);
  const runs = Number(values.runs);
  const source = path.join(values.dir!, 'source');
  const output = path.join(values.dir!, 'output');
  const originalBytes = await generate(source, images);
  console.log(`${images} JPEGs, ${(originalBytes / 1e6).toFixed(1)} MB (${(originalBytes / images / 1024).toFixed(0)} KiB each); `
    + `${CPUS} CPUs; load average ${os.loadavg()[0].toFixed(1)}`);

  const pinnings = [{ name: '1 CPU', cpus: '0', threads: 1 }, { name: `${CPUS} CPUs`, cpus: `0-${CPUS - 1}`, threads: CPUS }];
  const contenders = pinnings.flatMap((pinning) => [
    { name: `pack, ${pinning.name}`, pinning, run: () => {
      rmSync(output, { recursive: true, force: true });
      // Exit 1 would mean failures: none of these images fails, so execFileSync throws only on a real error.
      return timed(pinning.cpus, process.execPath, [CLI, 'pack', source, output, '--resize', String(SIDE), '--quality', String(QUALITY)]);
    } },
    { name: `sharp floor, ${pinning.name}`, pinning, run: () => timed(pinning.cpus, process.execPath, [FLOOR, source, String(pinning.threads), String(SIDE), String(QUALITY)]) },
  ]);
  const timings = new Map<string, Timing[]>(contenders.map((c) => [c.name, []]));
  for (let run = 0; run < runs; run++) {
    for (const contender of contenders) timings.get(contender.name)!.push(contender.run());
  }
  const manifest = JSON.parse(readFileSync(path.join(output, 'manifest.json'), 'utf8')) as { shards: Array<{ bytes: number }>; records: number };
  const shardBytes = manifest.shards.reduce((sum, shard) => sum + shard.bytes, 0);

  const rate = (name: string) => images / Math.min(...timings.get(name)!.map((t) => t.seconds));
  const cpuMs = (name: string) => 1000 * Math.min(...timings.get(name)!.map((t) => t.cpuSeconds)) / images;
  console.log('\ncontender                 images/s (best)   CPU ms/image (least)   peak RSS');
  for (const contender of contenders) {
    const peak = Math.max(...timings.get(contender.name)!.map((t) => t.peakRssMB));
    console.log(`${contender.name.padEnd(26)}${rate(contender.name).toFixed(1).padStart(15)}${cpuMs(contender.name).toFixed(2).padStart(23)}`
      + `${peak.toFixed(0).padStart(9)} MB`);
  }
  const [one, all] = pinnings.map((p) => p.name);
  console.log(`\npack / floor, ${all}:            ${(rate(`pack, ${all}`) / rate(`sharp floor, ${all}`)).toFixed(2)} (target >= 0.85)`);
  console.log(`pack / floor, ${one}:             ${(rate(`pack, ${one}`) / rate(`sharp floor, ${one}`)).toFixed(2)}`);
  console.log(`CPU per image, floor / pack:     ${(cpuMs(`sharp floor, ${all}`) / cpuMs(`pack, ${all}`)).toFixed(2)} (${all}), `
    + `${(cpuMs(`sharp floor, ${one}`) / cpuMs(`pack, ${one}`)).toFixed(2)} (${one})`);
  console.log(`speed-up ${all} over 1, pack:     ${(rate(`pack, ${all}`) / rate(`pack, ${one}`)).toFixed(2)} (target >= 1.8 on 2 CPUs)`);
  console.log(`speed-up ${all} over 1, floor:    ${(rate(`sharp floor, ${all}`) / rate(`sharp floor, ${one}`)).toFixed(2)}`);
  console.log(`bytes per image / original:      ${(shardBytes / manifest.records / (originalBytes / images)).toFixed(3)} `
    + `(${(shardBytes / manifest.records / 1024).toFixed(1)} KiB of shard per image; target <= 0.4)`);
  console.log(`load average after:              ${os.loadavg()[0].toFixed(1)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
