import * as fs from 'node:fs';
import * as path from 'node:path';
import { CPU_DECODE_AUGMENT_PER_WORKER, DECODE_RATE_SAMPLE_BYTES } from '../../lib/contract/decoding-rates';
import { cpuDecodeSamplesPerSecondPerWorker } from '../../lib/instances/private/loader-rules';

const REPO = path.resolve(__dirname, '..', '..');

/** A `NAME = 1_234` constant of a Python module, as a number. */
function pythonConstant(file: string, name: string): number {
  const source = fs.readFileSync(path.join(REPO, file), 'utf8');
  const match = new RegExp(`^${name} = ([\\d_]+)$`, 'm').exec(source);
  if (!match) throw new Error(`${file} has no ${name} = <number> line`);
  return Number(match[1].replace(/_/g, ''));
}

describe('the decoding-rate table (lib/contract/decoding-rates.ts) is the one source of per-worker rates', () => {
  test("train.py's --loader auto prior holds a copy of the table's figure and sample size", () => {
    expect(pythonConstant('container/trainer/loader_choice.py', 'CPU_DECODE_AUGMENT_PER_WORKER')).toBe(CPU_DECODE_AUGMENT_PER_WORKER);
    expect(pythonConstant('container/trainer/loader_choice.py', 'DECODE_RATE_SAMPLE_BYTES')).toBe(DECODE_RATE_SAMPLE_BYTES);
  });

  test("the planner's per-worker rate at the table's sample size is the table's figure", () => {
    expect(cpuDecodeSamplesPerSecondPerWorker(DECODE_RATE_SAMPLE_BYTES)).toBeCloseTo(CPU_DECODE_AUGMENT_PER_WORKER, 6);
  });

  test.each(['README.md', 'docs/gpu-loaders.md', 'docs/decisions.md', 'docs/performance.md', 'docs/image-preprocessing-deploy.md'])(
    '%s cites the table instead of a per-worker figure of its own', (page) => {
      const text = fs.readFileSync(path.join(REPO, page), 'utf8');
      // The figures docs used to state on their own (issue #37): 100, 280, 330, 727, 1,284 a worker or core.
      expect(text).not.toMatch(/\b(100|280|330|727|1,284)\b[^.|\n]{0,40}(per (loader )?(worker|core)|a second per core)/);
      expect(text).not.toMatch(/(per (loader )?(worker|core)|one core decodes)[^.|\n]{0,60}\b(100|280|330|727|1,284)\b/);
    });
});
