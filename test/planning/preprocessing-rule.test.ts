import { Size } from 'aws-cdk-lib';
import type { DatasetProfile, IoPlan, IoPlanProps, TrainingCluster } from '../../lib';
import { IoPlanner, SampleEncoding, TrainingInstance } from '../../lib';
import { cpuDecodeSamplesPerSecond } from '../../lib/instances/private/loader-rules';
import { RESIZED_DECODE_SPEEDUP } from '../../lib/planning/private/preprocessing-rule';
import { runCli as run } from '../support/run-cli';

const GB = 1e9;
/** ml.p3dn.24xlarge: 96 vCPUs for 8 GPUs, 11 loader workers per process. */
const P3DN: TrainingCluster = { instance: TrainingInstance.P3DN_24XLARGE };
/** What 11 loader workers decode on the CPU, as the planner estimates it (the constant is the loader rules'). */
const CAPACITY = cpuDecodeSamplesPerSecond(11);

function plan(extra: Partial<IoPlanProps> = {}, dataset: Partial<DatasetProfile> = {}): IoPlan {
  return IoPlanner.plan({ dataset: { objectCount: 1_000_000, totalSize: Size.bytes(90 * GB), ...dataset }, cluster: P3DN, ...extra });
}

describe('IoPlanner: resizing the images at pack time', () => {
  test('the measured speed-up of decoding resized images is 1.7× (727 → 1,260 JPEGs per core)', () => {
    expect(RESIZED_DECODE_SPEEDUP).toBeCloseTo(1.733, 3);
  });

  test('is advised when the GPU consumes more than the loader workers decode, with the gain up to the resized decoding rate', () => {
    // WHEN the GPU would take three times what the CPUs decode
    const { imagePreprocessing } = plan({ samplesPerSecondPerDevice: 3 * CAPACITY });
    // THEN the gain is the whole measured speed-up
    expect(imagePreprocessing).toMatchObject({
      advised: true, expectedSpeedup: 1.73, resizedCpuSamplesPerSecondPerProcess: CAPACITY * RESIZED_DECODE_SPEEDUP,
    });
    expect(imagePreprocessing.reason).toMatch(/less than the .* each GPU consumes: resize at pack time \(ShardedDataset imagePreprocessing, .*training-io pack --resize\)/);
    expect(imagePreprocessing.reason).toMatch(/1\.7× faster \(727 → 1,260 per core, measured\)/);
  });

  test('the gain stops at what the GPU consumes', () => {
    // WHEN the GPU would take 20 % more than the CPUs decode
    const { imagePreprocessing } = plan({ samplesPerSecondPerDevice: 1.2 * CAPACITY });
    // THEN
    expect(imagePreprocessing).toMatchObject({ advised: true, expectedSpeedup: 1.2 });
  });

  test.each<[string, Partial<IoPlanProps>, Partial<DatasetProfile>, RegExp]>([
    ['the CPUs decode as much as the GPU consumes', { samplesPerSecondPerDevice: CAPACITY }, {}, /enough for the/],
    ['the GPU\'s rate is unknown', {}, {}, /give the samples\/s each GPU consumes to compare/],
    ['the samples are not JPEG images', { samplesPerSecondPerDevice: 3 * CAPACITY }, { sampleEncoding: SampleEncoding.OTHER }, /not JPEG images/],
    ['the dataset is already resized, and decodes fast enough', { samplesPerSecondPerDevice: 1.5 * CAPACITY, imagePreprocessing: { shorterSidePixels: 256 } }, {},
      /^resized at pack time: 11 loader workers decode about .* a second per process, enough for/],
    ['the dataset is already resized, and still decodes too slowly', { samplesPerSecondPerDevice: 3 * CAPACITY, imagePreprocessing: { shorterSidePixels: 256 } }, {},
      /^resized at pack time: .*still less than the .* each GPU consumes: decode on the GPU too \(DALI\)/],
  ])('is not advised when %s', (_what, extra, dataset, reason) => {
    const { imagePreprocessing } = plan(extra, dataset);
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
    expect(stdout).toMatch(/^resize images {2}resize at pack time \(~1\.73×\) {2,}11 loader workers decode about .*training-io pack --resize/m);
  });
});
