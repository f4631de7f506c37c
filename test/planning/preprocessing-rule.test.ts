import { Size } from 'aws-cdk-lib';
import type { DatasetProfile, IoPlan, IoPlanProps, TrainingCluster } from '../../lib';
import { IoPlanner, SampleEncoding, TrainingInstance } from '../../lib';
import { cpuDecodeSamplesPerSecond } from '../../lib/instances/private/loader-rules';
import { RESIZED_SAMPLE_BYTES, resizedSampleBytes } from '../../lib/planning/private/decoding-rates';
import { runCli as run } from '../support/run-cli';

const GB = 1e9;
/** ml.p3dn.24xlarge: 96 vCPUs for 8 GPUs, 11 loader workers per process. */
const P3DN: TrainingCluster = { instance: TrainingInstance.P3DN_24XLARGE };
/** What 11 loader workers decode on the CPU at 90 KB, as the planner estimates it (the rate is the loader rules'). */
const CAPACITY = cpuDecodeSamplesPerSecond(11, 90_000);
/** The same workers on JPEGs resized to a shorter side of 256 (~32 KB). */
const RESIZED = cpuDecodeSamplesPerSecond(11, RESIZED_SAMPLE_BYTES);

function plan(extra: Partial<IoPlanProps> = {}, dataset: Partial<DatasetProfile> = {}, cluster: TrainingCluster = P3DN): IoPlan {
  return IoPlanner.plan({ dataset: { objectCount: 1_000_000, totalSize: Size.bytes(90 * GB), ...dataset }, cluster, ...extra });
}

describe('resizedSampleBytes: a resized JPEG\'s mean size follows the pixels kept, and never grows', () => {
  test.each<[number, Parameters<typeof resizedSampleBytes>[1], number]>([
    [1_200_000, undefined, 32_000],
    [1_200_000, { shorterSidePixels: 512 }, 128_000],
    [1_200_000, { shorterSidePixels: 128 }, 8_000],
    [1_200_000, { longerSidePixels: 1024 }, 288_000],
    [5_000, { shorterSidePixels: 256 }, 5_000],
    [1_200_000, { jpegQuality: 80 }, 1_200_000],
  ])('%d bytes with %j: %d', (bytes, options, resized) => {
    expect(resizedSampleBytes(bytes, options)).toBeCloseTo(resized, 6);
  });
});

describe('IoPlanner: resizing the images at pack time', () => {
  test('resized JPEGs decode about twice as fast per worker at 90 KB (measured: 1.5× a job\'s samples/s, GPU-bound; 1.7× per core)', () => {
    expect(RESIZED / CAPACITY).toBeGreaterThan(1.5);
    expect(RESIZED / CAPACITY).toBeLessThan(2.5);
  });

  test('is advised when the GPU consumes more than the loader workers decode, with the gain up to the resized decoding rate', () => {
    // WHEN the GPU would take three times what the CPUs decode
    const { imagePreprocessing } = plan({ samplesPerSecondPerDevice: 3 * CAPACITY });
    // THEN the gain is the whole of the resized decoding rate's
    expect(imagePreprocessing).toMatchObject({
      advised: true, expectedSpeedup: Math.round((RESIZED / CAPACITY) * 100) / 100, resizedCpuSamplesPerSecondPerProcess: RESIZED,
    });
    expect(imagePreprocessing.reason).toMatch(/less than the .* each GPU consumes: resize at pack time \(ShardedDataset imagePreprocessing, .*training-io pack --resize 256\)/);
    expect(imagePreprocessing.reason).toMatch(/resized to a shorter side of 256 pixels \(~32\.0 KB each\) they would decode about [\d,]+\/s, .*still less than the GPU consumes/);
  });

  test('the gain stops at what the GPU consumes', () => {
    // WHEN the GPU would take 20 % more than the CPUs decode
    const { imagePreprocessing } = plan({ samplesPerSecondPerDevice: 1.2 * CAPACITY });
    // THEN
    expect(imagePreprocessing).toMatchObject({ advised: true, expectedSpeedup: 1.2 });
  });

  test.each<[string, Partial<IoPlanProps>, Partial<DatasetProfile>, TrainingCluster, RegExp]>([
    ['the CPUs decode as much as the GPU consumes', { samplesPerSecondPerDevice: CAPACITY }, {}, P3DN, /enough for the/],
    ['the GPU\'s rate is unknown (an A10G: not in the table)', {}, {}, { instance: TrainingInstance.G5_2XLARGE },
      /would decode about [\d,]+\/s; give the samples\/s each GPU consumes to compare/],
    ['the samples are not JPEG images', { samplesPerSecondPerDevice: 3 * CAPACITY }, { sampleEncoding: SampleEncoding.OTHER }, P3DN, /not JPEG images/],
    ['the JPEGs are no larger than resized ones', { samplesPerSecondPerDevice: 3 * CAPACITY }, { totalSize: Size.bytes(5 * GB) }, P3DN,
      /\(5\.0 KB each; the GPU decoding row\), enough for the .*; they are no larger than a JPEG resized to a shorter side of 256 pixels/],
    ['the dataset is already resized, and decodes fast enough', { samplesPerSecondPerDevice: 1.5 * CAPACITY, imagePreprocessing: { shorterSidePixels: 256 } }, {}, P3DN,
      /^resized at pack time: 11 loader workers decode about [\d,]+ JPEGs\/s per process \(32\.0 KB each, resized; the GPU decoding row\), enough for/],
    ['the dataset is already resized, and still decodes too slowly', { samplesPerSecondPerDevice: 3 * CAPACITY, imagePreprocessing: { shorterSidePixels: 256 } }, {}, P3DN,
      /^resized at pack time: .*less than the .* each GPU consumes: decode on the GPU too \(the GPU decoding row\)/],
  ])('is not advised when %s', (_what, extra, dataset, cluster, reason) => {
    const { imagePreprocessing } = plan(extra, dataset, cluster);
    expect(imagePreprocessing.advised).toBe(false);
    expect(imagePreprocessing.expectedSpeedup).toBeUndefined();
    expect(imagePreprocessing.reason).toMatch(reason);
  });

  test('training-io plan prints the advice and its gain', async () => {
    // WHEN
    const { code, stdout } = await run('plan', '--objects', '1000000', '--bytes', '90GB', '--instance', 'ml.p3dn.24xlarge',
      '--samples-per-second', String(3 * CAPACITY));
    // THEN
    expect(code).toBe(0);
    const speedup = String(Math.round((RESIZED / CAPACITY) * 100) / 100).replace('.', '\\.');
    expect(stdout).toMatch(new RegExp(`^resize images {2,}resize at pack time \\(~${speedup}×\\) {2,}11 loader workers decode about .*training-io pack --resize 256`, 'm'));
  });
});
