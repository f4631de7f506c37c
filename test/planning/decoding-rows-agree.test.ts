import { Size } from 'aws-cdk-lib';
import type { IoPlan, TrainingCluster } from '../../lib';
import { IoPlanner, PlannedLoader, TrainingInstance } from '../../lib';
import { RESIZED_SAMPLE_BYTES } from '../../lib/planning/private/decoding-rates';
import { runCli as run } from '../support/run-cli';

/** The means of the issue (#34): thumbnails, ImageNet-like, camera JPEGs, large photographs. */
const MEANS: Array<[string, number]> = [['5 KB', 5e3], ['90 KB', 90e3], ['1.2 MB', 1.2e6], ['5 MB', 5e6]];

/** Instances whose GPU the table knows (A100, H200) or does not (A10G: with a given rate, and without). */
const CLUSTERS: Array<[string, TrainingCluster, number | undefined]> = [
  ['4 × ml.g5.2xlarge at 1,000 samples/s', { instance: TrainingInstance.G5_2XLARGE, instanceCount: 4 }, 1000],
  ['ml.g5.2xlarge, rate unknown', { instance: TrainingInstance.G5_2XLARGE }, undefined],
  ['ml.p4d.24xlarge (A100 in the table)', { instance: TrainingInstance.P4D_24XLARGE }, undefined],
  ['ml.p5e.48xlarge (H200 in the table)', { instance: TrainingInstance.P5E_48XLARGE }, undefined],
];

function plan(meanBytes: number, cluster: TrainingCluster, samplesPerSecondPerDevice: number | undefined): IoPlan {
  return IoPlanner.plan({
    dataset: { objectCount: 1_280_000, meanObjectSize: Size.bytes(meanBytes) },
    cluster, epochs: 5, samplesPerSecondPerDevice,
  });
}

/** Every `about N JPEGs/s per process` a reason states. */
function statedRates(reason: string): number[] {
  return [...reason.matchAll(/about ([\d,]+) JPEGs\/s per process/g)].map((match) => Number(match[1].replace(/,/g, '')));
}

describe.each(CLUSTERS)('the GPU decoding and resizing rows agree: %s', (_name, cluster, samplesPerSecond) => {
  test.each(MEANS)('JPEGs of %s', (_size, meanBytes) => {
    // WHEN
    const { gpuDecoding, imagePreprocessing } = plan(meanBytes, cluster, samplesPerSecond);
    const capacity = gpuDecoding.cpuSamplesPerSecondPerProcess;
    const demand = gpuDecoding.gpuSamplesPerSecond;

    // THEN both rows state the same CPU rate, the one the plan records
    expect(statedRates(gpuDecoding.reason)).toEqual([capacity]);
    expect(statedRates(imagePreprocessing.reason)).toEqual([capacity]);
    // the same figure for the GPU: the resize row names it where the GPU decoding row has one, and asks for none
    if (demand === undefined) {
      expect(imagePreprocessing.reason).toMatch(/give the samples\/s each GPU consumes to compare/);
    } else {
      expect(imagePreprocessing.reason).toContain(`${demand.toLocaleString('en-US')} each `);
      expect(imagePreprocessing.reason).not.toMatch(/give the samples\/s/);
    }
    // the same verdict: the CPUs keep up in both rows or in neither
    const cpuKeepsUp = demand === undefined || demand <= capacity;
    expect(gpuDecoding.loader === PlannedLoader.CPU).toBe(cpuKeepsUp);
    expect(imagePreprocessing.advised).toBe(!cpuKeepsUp && meanBytes > RESIZED_SAMPLE_BYTES);
    // resizing fewer bytes decodes more of them, and never fewer
    expect(imagePreprocessing.resizedCpuSamplesPerSecondPerProcess).toBeGreaterThanOrEqual(capacity - 0.5);
    if (imagePreprocessing.advised) {
      const fed = Math.min(demand!, imagePreprocessing.resizedCpuSamplesPerSecondPerProcess);
      expect(Math.abs(imagePreprocessing.expectedSpeedup! * capacity / fed - 1)).toBeLessThan(0.02);
    }
  });

  test('the CPU rate falls as the mean sample grows, in both rows', () => {
    const rates = MEANS.map(([, bytes]) => plan(bytes, cluster, samplesPerSecond).gpuDecoding.cpuSamplesPerSecondPerProcess);
    expect([...rates].sort((a, b) => b - a)).toEqual(rates);
    expect(new Set(rates).size).toBe(MEANS.length);
  });
});

describe('the issue\'s plan (#34): 1.2 MB JPEGs on 4 × ml.g5.2xlarge at 1,000 samples/s', () => {
  test('both rows say the 7 workers fall short at 1.2 MB; the resize row advises resizing and keeps the GPU decoding row\'s figure', async () => {
    // WHEN
    const { code, stdout } = await run('plan', '--objects', '1280000', '--bytes', '1.5TB', '--instance', 'ml.g5.2xlarge', '--count', '4',
      '--epochs', '5', '--samples-per-second', '1000');

    // THEN
    expect(code).toBe(0);
    const gpuRow = /^GPU decoding +--loader gpu +7 loader workers decode and augment about ([\d,]+) JPEGs\/s per process \(1\.2 MB each;/m.exec(stdout);
    const resizeRow = /^resize images +resize at pack time \(~[\d.]+×\) +7 loader workers decode about ([\d,]+) JPEGs\/s per process \(1\.2 MB each; the GPU decoding row\), less than the 1,000 each GPU consumes/m.exec(stdout);
    expect(gpuRow).not.toBeNull();
    expect(resizeRow).not.toBeNull();
    expect(resizeRow![1]).toBe(gpuRow![1]);
  });

  test('the wording: one process, a rate per second of JPEGs of a size, no "~under"', async () => {
    // WHEN
    const { stdout } = await run('plan', '--objects', '1280000', '--bytes', '1.5TB', '--instance', 'ml.g5.2xlarge', '--count', '4',
      '--epochs', '5', '--samples-per-second', '1000');

    // THEN
    expect(stdout).toContain('on 4 × ml.g5.2xlarge (1 process each), 5 epochs');
    expect(stdout).toContain('= 4 instances × 1 process × 7 loader workers');
    expect(stdout).toMatch(/^start-up +none +SageMaker mounts/m);
    expect(stdout).not.toMatch(/1 processes|1 instances|~under|JPEGs of [\d.]+ [KMG]B\/s/);
  });
});

describe('the GPU table: compiled where measured, eager otherwise, and says which', () => {
  test.each<[string, TrainingCluster, RegExp]>([
    ['H200: measured compiled', { instance: TrainingInstance.P5E_48XLARGE }, /the ~5,531 an H200 trains ResNet-50 at with a compiled step \(train\.py --compile auto\) \(measured on one H200: torch\.compile/],
    ['H100: eager only', { instance: TrainingInstance.P5_48XLARGE }, /the ~3,284 an H100 trains ResNet-50 at with an eager step \(no compiled figure measured for the H100: a compiled step trains faster; measured on an H100 80GB \(eager, batch 64/],
    ['A100: eager only', { instance: TrainingInstance.P4D_24XLARGE }, /the ~2,470 an A100 trains ResNet-50 at with an eager step \(no compiled figure measured for the A100/],
    ['V100: eager only', { instance: TrainingInstance.P3_2XLARGE }, /the ~1,156 a V100 trains ResNet-50 at with an eager step/],
  ])('%s', (_what, cluster, figure) => {
    expect(plan(90e3, cluster, undefined).gpuDecoding.reason).toMatch(figure);
  });
});
