import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '../../..');
export const PYTHON = process.env.PYTHON ?? (fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

/** Writes the probe corpus (make_probe_corpus.py, with Pillow) into `dir`; its files by name. */
export function writeProbeCorpus(dir: string): Map<string, Buffer> {
  const run = spawnSync(PYTHON, [path.join(__dirname, 'make_probe_corpus.py'), dir], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`make_probe_corpus.py failed (${run.status}): ${run.stderr}${run.error?.message ?? ''}`);
  return new Map(fs.readdirSync(dir).map((name) => [name, fs.readFileSync(path.join(dir, name))]));
}

/** What the training readers find wrong with each record of a packed TFRecord dataset (decode_records.py), by file name. */
export function readerProblems(dataset: string): Map<string, string[]> {
  const run = spawnSync(PYTHON, [path.join(__dirname, 'decode_records.py'), dataset], {
    encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: { ...process.env, PYTHONPATH: path.join(REPO, 'container'), PYTHONDONTWRITEBYTECODE: '1' },
  });
  if (run.status !== 0) throw new Error(`decode_records.py failed (${run.status}): ${run.stderr}${run.error?.message ?? ''}`);
  const records = run.stdout.trim().split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { filename: string; problems: string[] });
  return new Map(records.map((record) => [record.filename, record.problems]));
}
