// Benchmark: an incremental repack after appending 5 % more files to a packed dataset, against a
// full repack of the same source (`--full`), both by `training-io pack` in the same run. Prints the
// bytes each wrote and its wall time, the ratios incremental/full (target: bytes near the appended
// files' share), and the appended files' own bytes, the floor any repack must write (an incremental
// repack also rewrites the shards under half the target, so it may write a little more), and each
// result's shard count and how many of its shards are under half the target. Not a test:
// `npm run bench:pack-append [-- --dir D --files N --percent P --runs R]`.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';

const CLI = path.join(__dirname, '..', 'bin', 'training-io.js');
const CLASSES = 100;

const { values } = parseArgs({
  options: {
    dir: { type: 'string', default: path.join(os.tmpdir(), 'training-io-bench-append') },
    files: { type: 'string', default: '100000' },
    percent: { type: 'string', default: '5' },
    runs: { type: 'string', default: '3' },
  },
});
const root = values.dir!;
const files = Number(values.files);
const appended = Math.round((files * Number(values.percent)) / 100);
const runs = Number(values.runs);

/** Deterministic incompressible 2–8 KB files `from`..`to`-1 (xorshift32), one folder per class. */
function generate(dir: string, from: number, to: number): number {
  let state = 0x9e3779b9 ^ from;
  const next = () => {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return state;
  };
  const pool = Buffer.alloc(8 * 1024 + 4096);
  for (let i = 0; i < pool.length; i += 4) pool.writeUInt32LE(next(), i);
  let bytes = 0;
  for (let c = 0; c < CLASSES; c++) mkdirSync(path.join(dir, `class-${String(c).padStart(3, '0')}`), { recursive: true });
  for (let i = from; i < to; i++) {
    const size = 2048 + (next() % (6 * 1024 + 1));
    const start = next() % 4096;
    writeFileSync(path.join(dir, `class-${String(i % CLASSES).padStart(3, '0')}`, `img-${String(i).padStart(7, '0')}.jpg`), pool.subarray(start, start + size));
    bytes += size;
  }
  return bytes;
}

/** Bytes of every file under `dir`, by path relative to it. */
function sizes(dir: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const full = path.join(entry.parentPath, entry.name);
      found.set(path.relative(dir, full), statSync(full).size);
    }
  }
  return found;
}

/** Bytes written into `dir` by a pack: new files, and files whose size changed (the root's manifests). */
function written(before: Map<string, number>, after: Map<string, number>): number {
  let bytes = 0;
  for (const [key, size] of after) if (before.get(key) !== size || !before.has(key)) bytes += size;
  return bytes;
}

function pack(source: string, output: string, extra: string[] = []): number {
  const started = process.hrtime.bigint();
  execFileSync(process.execPath, [CLI, 'pack', source, output, '--seed', '1', '--content', 'any', ...extra], { stdio: ['ignore', 'ignore', 'inherit'] });
  return Number(process.hrtime.bigint() - started) / 1e9;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

rmSync(root, { recursive: true, force: true });
const source = path.join(root, 'source');
const baseBytes = generate(source, 0, files);
const packed = path.join(root, 'packed-base');
pack(source, packed);
const appendedBytes = generate(source, files, files + appended);

const incremental = { seconds: [] as number[], bytes: 0 };
const full = { seconds: [] as number[], bytes: 0 };
for (let run = 0; run < runs; run++) {
  for (const [kind, result, extra] of [['incremental', incremental, []], ['full', full, ['--full']]] as const) {
    const output = path.join(root, `packed-${kind}`);
    rmSync(output, { recursive: true, force: true });
    cpSync(packed, output, { recursive: true });
    const before = sizes(output);
    result.seconds.push(pack(source, output, [...extra]));
    result.bytes = written(before, sizes(output));
  }
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
console.log(`${files} files (${mb(baseBytes)}) packed, then ${appended} more (${mb(appendedBytes)}, ${values.percent} %); median of ${runs}; `
  + `${os.availableParallelism()} CPUs, load ${os.loadavg()[0].toFixed(1)}`);
console.log(`incremental repack: ${mb(incremental.bytes)} written in ${median(incremental.seconds).toFixed(2)} s`);
console.log(`full repack:        ${mb(full.bytes)} written in ${median(full.seconds).toFixed(2)} s`);
console.log(`incremental ÷ full: bytes ${(incremental.bytes / full.bytes).toFixed(3)}, time ${(median(incremental.seconds) / median(full.seconds)).toFixed(3)}`);
console.log(`incremental bytes ÷ appended files' bytes: ${(incremental.bytes / appendedBytes).toFixed(3)} (1.0 = only the new files, framed)`);

/** The shard count of the dataset in `output` and how many of its shards are under half its target. */
function fragmentation(output: string): string {
  const manifest = JSON.parse(readFileSync(path.join(output, 'manifest.json'), 'utf8')) as {
    shards: Array<{ bytes: number }>; sizing: { targetShardBytes: number | null };
  };
  const half = (manifest.sizing.targetShardBytes ?? 0) / 2;
  return `${manifest.shards.length} shards, ${manifest.shards.filter((shard) => shard.bytes < half).length} under half the target`;
}
console.log(`shards: incremental ${fragmentation(path.join(root, 'packed-incremental'))}; full ${fragmentation(path.join(root, 'packed-full'))}`);
