// Benchmark: `training-io pack` (TFRecord and RecordIO) against GNU `tar cf` of the same folder,
// warm page cache, same run, same disk, runs taking turns. Every contender writes a new output:
// the previous archive or output folder is removed before the run, untimed (overwriting a 570 MB
// archive made tar pay for freeing the old one: 1.6 s against 1.17 s here). The last two rows read
// every file and write nothing: one `cat` per CPU (`xargs -P`), the machine's ceiling for reading
// the files, which the target (pack ≤ 0.7 × tar) was set from; and Node's floor
// (bench/read-floor.ts: one worker thread per CPU lists its share of the folders, stats and reads each file, nothing else),
// which no pack written in Node can beat. Prints best and median wall time, MB/s,
// median CPU time (user + system: on a machine other jobs load, the wall times of one core and of
// all say less than the CPU each run needed), the ratios pack/tar (target ≤ 0.7), peak RSS (target
// ≤ 300 MB) and the load average before and after each dataset's runs. Not a test: run
// `npm run bench:pack-local [-- --dir D --scale F --runs N --many FILES]`; `--many 1200000` adds a
// set of that many 100–400 B files, for peak RSS beyond the 131,072 files planned in memory;
// `--pinned` adds TFRecord runs (and floor runs) pinned with `taskset` to CPU 0 and to every CPU, and the speed-ups
// of all cores over one (the CLI sizes its worker threads from the CPUs it may run on).
// `--check` runs instead the cost of the pack-time image check (issue 32): 100,000 real JPEGs of
// 2-8 KB (scaled by --scale), packed with the check (`--content images`, the default for folder
// labels) and without (`--content any`), taking turns; it prints the ratio (target ≤ 1.10). In
// the same turns, the check alone on every core (bench/check-floor.ts): the pack's JS check and a
// native full parse two ways: sharp's full decode with failOn 'warning' (its cheaper shrink-on-load
// resizes let a cut JPEG through) and libjpeg-turbo itself at 1/8 scale (bench/libjpeg-floor.c,
// built here with cc and libjpeg-dev, left out with the reason where they are missing), with their
// per-file costs and the ratio each would give added to the pack without the check: the floor
// under the target on this machine. The
// other sets hold random bytes, not images: their packs run with `--content any`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { loadSharp } from '../lambda/packing/preprocess/load-sharp';

interface DatasetSpec {
  readonly name: string;
  readonly files: number;
  readonly classes: number;
  readonly minBytes: number;
  readonly maxBytes: number;
}

const DATASETS: DatasetSpec[] = [
  { name: 'small-2-8KB', files: 100_000, classes: 100, minBytes: 2 * 1024, maxBytes: 8 * 1024 },
  { name: 'large-150KB', files: 20_000, classes: 100, minBytes: 120 * 1024, maxBytes: 180 * 1024 },
];

/** `taskset -c` CPU lists: one core, every core. */
const PINNINGS = [
  { name: '1 core', cpus: '0' },
  { name: `${os.availableParallelism()} cores`, cpus: `0-${os.availableParallelism() - 1}` },
];

const CLI = path.join(__dirname, '..', 'bin', 'training-io.js');

/** The image check's set: real JPEGs (sharp-made noise, quality 80), 2-8 KB like the small set. */
const JPEG_SET: DatasetSpec = { name: 'jpegs-2-8KB', files: 100_000, classes: 100, minBytes: 2 * 1024, maxBytes: 8 * 1024 };
const READ_FLOOR = path.join(__dirname, 'read-floor.js');

/** Deterministic incompressible bytes (xorshift32), so runs compare and nothing compresses away. */
function generate(spec: DatasetSpec, dir: string): number {
  let state = 0x9e3779b9;
  const next = () => {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return state;
  };
  const pool = Buffer.alloc(spec.maxBytes + 4096);
  for (let i = 0; i < pool.length; i += 4) pool.writeUInt32LE(next(), i);
  let total = 0;
  for (let c = 0; c < spec.classes; c++) mkdirSync(path.join(dir, `class-${String(c).padStart(3, '0')}`), { recursive: true });
  for (let i = 0; i < spec.files; i++) {
    const size = spec.minBytes + (next() % (spec.maxBytes - spec.minBytes + 1));
    const start = next() % 4096;
    writeFileSync(path.join(dir, `class-${String(i % spec.classes).padStart(3, '0')}`, `img-${String(i).padStart(7, '0')}.jpg`),
      pool.subarray(start, start + size));
    total += size;
  }
  return total;
}

/**
 * Writes `spec.files` real JPEGs: 64 made by sharp from noise (sides 40-88 px, which gives 2-8 KB),
 * each file one of them with a comment segment after SOI that makes its bytes unique.
 */
async function generateJpegs(spec: DatasetSpec, dir: string): Promise<number> {
  const sharp = loadSharp();
  const bases: Buffer[] = [];
  for (let i = 0; i < 64; i++) {
    const side = 40 + (i % 13) * 4;
    const noise = Buffer.alloc(side * side * 3);
    for (let j = 0; j < noise.length; j++) noise[j] = (j * 2654435761 + i * 40503) >>> 24;
    bases.push(await sharp(noise, { raw: { width: side, height: side, channels: 3 } }).jpeg({ quality: 80 }).toBuffer());
  }
  let total = 0;
  for (let c = 0; c < spec.classes; c++) mkdirSync(path.join(dir, `class-${String(c).padStart(3, '0')}`), { recursive: true });
  for (let i = 0; i < spec.files; i++) {
    const base = bases[i % bases.length];
    const text = Buffer.from(`bench file ${i}`);
    const comment = Buffer.from([0xff, 0xfe, 0, text.length + 2]);
    const file = Buffer.concat([base.subarray(0, 2), comment, text, base.subarray(2)]);
    writeFileSync(path.join(dir, `class-${String(i % spec.classes).padStart(3, '0')}`, `img-${String(i).padStart(7, '0')}.jpg`), file);
    total += file.length;
  }
  return total;
}

interface Timing {
  readonly seconds: number;
  /** User + system CPU seconds. */
  readonly cpuSeconds: number;
  readonly peakRssMB: number;
}

/** Files per `cat` of the ceiling row: few processes, and the work still spread over the CPUs. */
const CAT_FILES_PER_PROCESS = 1000;

/** Runs a command under GNU time: wall seconds, CPU seconds and peak RSS in MB. */
function timed(command: string, args: string[], cwd?: string): Timing {
  const report = path.join(os.tmpdir(), `training-io-bench-time-${process.pid}.txt`);
  execFileSync('/usr/bin/time', ['-f', '%e %U %S %M', '-o', report, command, ...args], { stdio: ['ignore', 'ignore', 'inherit'], cwd });
  const [seconds, user, system, kib] = execFileSync('cat', [report]).toString().trim().split(/\s+/).map(Number);
  rmSync(report, { force: true });
  return { seconds, cpuSeconds: user + system, peakRssMB: kib / 1024 };
}

function medianOf(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Best and median wall time of the runs, median CPU time, and the largest peak RSS. */
function summarize(timings: Timing[]): { best: number; median: number; cpu: number; peakRssMB: number } {
  const seconds = timings.map((t) => t.seconds);
  return {
    best: Math.min(...seconds),
    median: medianOf(seconds),
    cpu: medianOf(timings.map((t) => t.cpuSeconds)),
    peakRssMB: Math.max(...timings.map((t) => t.peakRssMB)),
  };
}

/** The 1-minute load average, which says how much of the machine the runs had. */
function load(): string {
  return os.loadavg()[0].toFixed(1);
}

/** The image check's cost: packs of real JPEGs with and without it, taking turns. */
async function benchImageCheck(dir: string, scale: number, runs: number): Promise<void> {
  const spec = { ...JPEG_SET, files: Math.round(JPEG_SET.files * scale) };
  const root = path.join(dir, `${spec.name}-${spec.files}`);
  const source = path.join(root, 'source');
  if (!existsSync(path.join(root, '.complete'))) {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(source, { recursive: true });
    writeFileSync(path.join(root, '.complete'), String(await generateJpegs(spec, source)));
  }
  const bytes = Number(execFileSync('cat', [path.join(root, '.complete')]).toString());
  const out = path.join(root, 'packed');
  const contenders = ['any', 'images'].map((content) => ({
    name: `pack --content ${content}`,
    run: () => {
      rmSync(out, { recursive: true, force: true });
      return timed(process.execPath, [CLI, 'pack', source, out, '--format', 'tfrecord', '--seed', '1', '--content', content]);
    },
  }));
  contenders[0].run(); // warms the page cache
  const timings = contenders.map((): Timing[] => []);
  const libjpeg = buildLibjpegFloor();
  const floors = [
    ...CHECK_FLOORS.map(({ name, mode }) => ({ name, run: () => checkFloor(source, mode), timings: [] as FloorTiming[] })),
    ...(libjpeg ? [{ name: 'libjpeg-turbo at 1/8', run: () => libjpegFloor(libjpeg, source), timings: [] as FloorTiming[] }] : []),
  ];
  const loadBefore = load();
  for (let run = 0; run < runs; run++) {
    contenders.forEach((contender, i) => {
      timings[i].push(contender.run());
      execFileSync('sync');
    });
    floors.forEach((floor) => floor.timings.push(floor.run()));
  }
  console.log(`\n${spec.name}: ${spec.files} real JPEGs, ${(bytes / 1e6).toFixed(0)} MB (best and median of ${runs}; load average ${loadBefore} before, ${load()} after)`);
  const [without, withCheck] = timings.map(summarize);
  contenders.forEach((contender, i) => {
    const { best, median, cpu, peakRssMB } = [without, withCheck][i];
    console.log(`  ${contender.name.padEnd(22)} best ${best.toFixed(2)} s  median ${median.toFixed(2)} s  CPU ${cpu.toFixed(2)} s  peak RSS ${peakRssMB.toFixed(0)} MB`);
  });
  console.log(`  with the check ÷ without (target ≤ 1.10): best ${(withCheck.best / without.best).toFixed(3)}, median ${(withCheck.median / without.median).toFixed(3)}, `
    + `CPU ${(withCheck.cpu / without.cpu).toFixed(3)}`);
  printCheckFloor(spec.files, without, floors);
}

/** The check alone, in memory on every core (bench/check-floor.ts): the pack's JS check, and sharp's full decode. */
const CHECK_FLOORS: Array<{ mode: 'js' | 'sharp'; name: string }> = [
  { mode: 'js', name: 'JS check alone' },
  { mode: 'sharp', name: 'sharp full decode' },
];
const CHECK_FLOOR = path.join(__dirname, 'check-floor.js');
const LIBJPEG_FLOOR_SOURCE = path.join(__dirname, '..', '..', 'bench', 'libjpeg-floor.c');
const LIBJPEG_FLOOR = path.join(__dirname, 'libjpeg-floor');

interface FloorTiming {
  /** Wall seconds on every core: measured for the worker threads, CPU ÷ cores for libjpeg's one thread. */
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly refusesCut: boolean;
}

function checkFloor(source: string, mode: 'js' | 'sharp'): FloorTiming {
  const line = execFileSync(process.execPath, [CHECK_FLOOR, source, mode]).toString();
  const match = /(\d+) files ([\d.]+) s ([\d.]+) cpu (\d+) threads refuses-cut (yes|no)/.exec(line);
  if (!match) throw new Error(`check-floor printed '${line.trim()}', not its one line`);
  return { seconds: Number(match[2]), cpuSeconds: Number(match[3]), refusesCut: match[5] === 'yes' };
}

/** Builds bench/libjpeg-floor.c; undefined, with the reason printed, where no C compiler or libjpeg-dev is found. */
function buildLibjpegFloor(): string | undefined {
  try {
    execFileSync('cc', ['-O2', '-o', LIBJPEG_FLOOR, LIBJPEG_FLOOR_SOURCE, '-ljpeg'], { stdio: ['ignore', 'ignore', 'pipe'] });
    return LIBJPEG_FLOOR;
  } catch (error) {
    console.log(`  (no libjpeg floor: \`cc ${path.basename(LIBJPEG_FLOOR_SOURCE)} -ljpeg\` failed, it needs a C compiler and libjpeg-dev: `
      + `${String((error as { stderr?: Buffer }).stderr ?? error).split('\n')[0]})`);
    return undefined;
  }
}

/** libjpeg-turbo itself, one thread at 1/8 scale: its CPU time, spread over the cores as the pack's workers would. */
function libjpegFloor(binary: string, source: string): FloorTiming {
  const list = execFileSync('find', [source, '-type', 'f'], { maxBuffer: 1 << 30 }); // ~60 B a path: 1 MB by default is 17,000 files
  const line = execFileSync(binary, { input: list }).toString();
  const match = /(\d+) files ([\d.]+) cpu refuses-cut (yes|no) (\d+) bad/.exec(line);
  if (!match) throw new Error(`libjpeg-floor printed '${line.trim()}', not its one line`);
  if (Number(match[4]) > 0) throw new Error(`libjpeg-floor refused ${match[4]} of the bench's JPEGs`);
  const cpuSeconds = Number(match[2]);
  return { seconds: cpuSeconds / os.availableParallelism(), cpuSeconds, refusesCut: match[3] === 'yes' };
}

/**
 * Per-file costs: the pack without the check, the JS check alone and the native floors, and the
 * ratio each would give added to the pack, (pack + check) ÷ pack, in wall time on every core and in
 * CPU time (which other jobs on the machine disturb less). When even the cheapest native parse
 * gives over 1.10, no check that reads every entropy-coded block meets the target on this machine.
 */
function printCheckFloor(files: number, without: { median: number; cpu: number }, floors: Array<{ name: string; timings: FloorTiming[] }>): void {
  const perFile = (seconds: number) => `${(seconds / files * 1e6).toFixed(1)} µs`;
  console.log(`  per file (medians; wall on ${os.availableParallelism()} cores, CPU summed over them): pack --content any ${perFile(without.median)} wall, `
    + `${perFile(without.cpu)} CPU`);
  const ratios = floors.map(({ name, timings }) => {
    const seconds = medianOf(timings.map((t) => t.seconds));
    const cpu = medianOf(timings.map((t) => t.cpuSeconds));
    const wallRatio = (without.median + seconds) / without.median;
    const cpuRatio = (without.cpu + cpu) / without.cpu;
    console.log(`  ${name.padEnd(22)} ${perFile(seconds)} wall, ${perFile(cpu)} CPU; refuses a JPEG cut short with FF D9 appended: `
      + `${timings[0].refusesCut ? 'yes' : 'NO'}; (pack + it) ÷ pack: wall ${wallRatio.toFixed(2)}, CPU ${cpuRatio.toFixed(2)}`);
    return { name, ratio: Math.min(wallRatio, cpuRatio), refuses: timings[0].refusesCut };
  });
  const native = ratios.filter(({ name, refuses }) => name !== CHECK_FLOORS[0].name && refuses);
  const floor = native.reduce((best, r) => (r.ratio < best.ratio ? r : best), native[0]);
  if (floor && floor.ratio > 1.10) {
    console.log(`  the cheapest native parse (${floor.name}) alone gives ${floor.ratio.toFixed(2)} > 1.10: the target lies beyond this machine's floor`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: {
    dir: { type: 'string', default: path.join(os.tmpdir(), 'training-io-bench') },
    scale: { type: 'string', default: '1' },
    runs: { type: 'string', default: '3' },
    many: { type: 'string', default: '0' },
    pinned: { type: 'boolean', default: false },
    check: { type: 'boolean', default: false },
  } });
  const scale = Number(values.scale);
  const runs = Number(values.runs);
  const many = Number(values.many);
  if (values.check) {
    console.log(`pack-local --check: node ${process.version}, ${os.cpus().length} CPUs, ${runs} runs each, taking turns`);
    await benchImageCheck(values.dir!, scale, runs);
    return;
  }
  const datasets = many > 0 ? [...DATASETS, { name: 'many-100-400B', files: many, classes: 1000, minBytes: 100, maxBytes: 400 }] : DATASETS;
  console.log(`pack-local: node ${process.version}, ${os.cpus().length} CPUs, ${runs} runs each, taking turns`);
  for (const base of datasets) {
    const spec = { ...base, files: Math.round(base.files * scale) };
    const root = path.join(values.dir!, `${spec.name}-${spec.files}`);
    const source = path.join(root, 'source');
    if (!existsSync(path.join(root, '.complete'))) {
      rmSync(root, { recursive: true, force: true });
      mkdirSync(source, { recursive: true });
      const bytes = generate(spec, source);
      writeFileSync(path.join(root, '.complete'), String(bytes));
    }
    const bytes = Number(execFileSync('cat', [path.join(root, '.complete')]).toString());
    const tarFile = path.join(root, 'out.tar');
    // Warm the page cache once, so every contender reads from memory.
    timed('tar', ['cf', tarFile, '-C', source, '.']);
    // The contenders take turns, run after run, so that a slow spell of the machine (other jobs)
    // falls on all of them alike.
    const contenders: Array<{ name: string; run: () => Timing }> = [
      {
        name: 'tar cf',
        run: () => {
          rmSync(tarFile, { force: true });
          return timed('tar', ['cf', tarFile, '-C', source, '.']);
        },
      },
      ...['tfrecord', 'recordio'].map((format) => ({
        name: `pack ${format}`,
        run: () => {
          const out = path.join(root, `packed-${format}`);
          rmSync(out, { recursive: true, force: true });
          return timed(process.execPath, [CLI, 'pack', source, out, '--format', format, '--seed', '1', '--content', 'any']);
        },
      })),
      ...(values.pinned ? PINNINGS.map(({ name, cpus }) => ({
        name: `pack tfrecord ${name}`,
        run: () => {
          const out = path.join(root, 'packed-pinned');
          rmSync(out, { recursive: true, force: true });
          return timed('taskset', ['-c', cpus, process.execPath, CLI, 'pack', source, out, '--format', 'tfrecord', '--seed', '1', '--content', 'any']);
        },
      })) : []),
      {
        name: `${os.availableParallelism()} × cat`,
        run: () => timed('sh', ['-c', `find . -type f -print0 | xargs -0 -P ${os.availableParallelism()} -n ${CAT_FILES_PER_PROCESS} cat > /dev/null`], source),
      },
      { name: 'node stat+read floor', run: () => timed(process.execPath, [READ_FLOOR, source]) },
      ...(values.pinned ? PINNINGS.map(({ name, cpus }) => ({
        name: `node floor ${name}`,
        run: () => timed('taskset', ['-c', cpus, process.execPath, READ_FLOOR, source]),
      })) : []),
    ];
    const timings = contenders.map((): Timing[] => []);
    const loadBefore = load();
    for (let run = 0; run < runs; run++) {
      contenders.forEach((contender, i) => {
        timings[i].push(contender.run());
        // Untimed: what a run left for the kernel to write back (tar's 512 MB of dirty pages) is
        // written now, not during the next contender's run.
        execFileSync('sync');
      });
    }
    console.log(`\n${spec.name}: ${spec.files} files, ${(bytes / 1e6).toFixed(0)} MB (best and median of ${runs}; load average ${loadBefore} before, ${load()} after)`);
    const tar = summarize(timings[0]);
    contenders.forEach((contender, i) => {
      const { best, median, cpu, peakRssMB } = summarize(timings[i]);
      const ratios = i === 0 ? '' : `  ÷ tar: best ${(best / tar.best).toFixed(2)}, median ${(median / tar.median).toFixed(2)}`;
      console.log(`  ${contender.name.padEnd(22)} best ${best.toFixed(2)} s (${(bytes / 1e6 / best).toFixed(0)} MB/s)  median ${median.toFixed(2)} s  ` +
        `CPU ${cpu.toFixed(2)} s  peak RSS ${peakRssMB.toFixed(0)} MB${ratios}`);
    });
    if (values.pinned) {
      // The floor's own speed-up says how far the machine lets any Node reader scale.
      for (const what of ['pack tfrecord', 'node floor']) {
        const [one, all] = PINNINGS.map(({ name }) => summarize(timings[contenders.findIndex((contender) => contender.name === `${what} ${name}`)]));
        console.log(`  speed-up of ${what}, ${PINNINGS[1].name} over ${PINNINGS[0].name}: best ${(one.best / all.best).toFixed(2)}×, median ${(one.median / all.median).toFixed(2)}×`);
      }
    }
    rmSync(tarFile, { force: true });
  }
}

void main();
