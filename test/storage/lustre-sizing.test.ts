import { Lazy, Size } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as fsx from 'aws-cdk-lib/aws-fsx';
import type { LustreDatasetCacheProps} from '../../lib';
import { LustreDatasetCache, ReadRate, TrainingInstance } from '../../lib';
import { cacheTestStack, newCache, onlyResourceProperties } from './support';

const MBPS = 1e6;

/** A cache sized from these props, with what it rendered. */
function sized(props: Partial<LustreDatasetCacheProps>) {
  const context = cacheTestStack();
  const cache = newCache(context, props);
  const properties = onlyResourceProperties(context.stack, 'AWS::FSx::FileSystem');
  return {
    cache,
    annotations: Annotations.fromStack(context.stack),
    capacity: properties.StorageCapacity,
    tier: properties.LustreConfiguration.PerUnitStorageThroughput,
  };
}

function rate(megabytesPerSecond: number): ReadRate {
  return ReadRate.perSecond(Size.bytes(megabytesPerSecond * MBPS));
}

describe('LustreDatasetCache sizing', () => {
  describe('without a dataset size or read rate', () => {
    test.each([
      [fsx.LustreDeploymentType.PERSISTENT_2, 125, 150],
      [fsx.LustreDeploymentType.PERSISTENT_1, 50, 60],
      [fsx.LustreDeploymentType.SCRATCH_2, 200, 240],
    ])('%s is the smallest capacity, 1200 GiB, at the lowest tier, %s MB/s/TiB (%s MB/s)', (deploymentType, perUnit, baseline) => {
      // WHEN
      const { cache, capacity } = sized({ deploymentType });

      // THEN
      expect(capacity).toEqual(1200);
      expect(cache.storageCapacityGiB).toEqual(1200);
      expect(cache.perUnitStorageThroughput).toEqual(perUnit);
      expect(cache.baselineThroughputMBps).toEqual(baseline);
    });
  });

  describe('capacity for the dataset (plus 10 % headroom, in 1200, 2400, then 2400 GiB steps)', () => {
    test.each([
      [1, 1200],
      [1090, 1200], // 1199 GiB with headroom
      [1091, 2400], // 1200.1 GiB with headroom
      [2181, 2400], // 2399.1
      [2182, 4800], // 2400.2
      [4363, 4800], // 4799.3
      [4364, 7200], // 4800.4
      [100_000, 110_400],
    ])('a dataset of %s GiB gets %s GiB', (datasetGiB, expected) => {
      // WHEN
      const { capacity, tier } = sized({ datasetSize: Size.gibibytes(datasetGiB) });

      // THEN
      expect(capacity).toEqual(expected);
      expect(tier).toEqual(125);
    });
  });

  describe('throughput for the read rate (baseline = GiB / 1000 × MB/s/TiB, as FSx counts it)', () => {
    test.each([
      [150, 1200, 125], // 1.2 × 125 exactly
      [150.000001, 1200, 250],
      [300, 1200, 250],
      [600, 1200, 500],
      [1200, 1200, 1000],
      [1200.000001, 2400, 1000], // the top tier at 1200 GiB cannot: more capacity at the top tier
      [2400, 2400, 1000],
      [2400.000001, 4800, 1000],
      [10_000, 12_000, 1000],
    ])('PERSISTENT_2: %s MB/s at the smallest capacity gets %s GiB at %s MB/s/TiB', (megabytesPerSecond, expectedCapacity, expectedTier) => {
      // WHEN
      const { cache, capacity, tier, annotations } = sized({ readRate: rate(megabytesPerSecond) });

      // THEN
      expect([capacity, tier]).toEqual([expectedCapacity, expectedTier]);
      expect(cache.baselineThroughputMBps! * MBPS).toBeGreaterThanOrEqual(megabytesPerSecond * MBPS);
      annotations.hasNoWarning('*', Match.stringLikeRegexp('cacheThroughputBelowReadRate'));
    });

    test.each([
      [60, 1200, 50],
      [60.1, 1200, 100],
      [240, 1200, 200],
      [240.1, 2400, 200],
    ])('PERSISTENT_1: %s MB/s gets %s GiB at %s MB/s/TiB', (megabytesPerSecond, expectedCapacity, expectedTier) => {
      // WHEN
      const { capacity, tier } = sized({ deploymentType: fsx.LustreDeploymentType.PERSISTENT_1, readRate: rate(megabytesPerSecond) });

      // THEN
      expect([capacity, tier]).toEqual([expectedCapacity, expectedTier]);
    });

    test.each([
      [240, 1200],
      [240.1, 2400],
      [480, 2400],
      [480.1, 4800],
    ])('SCRATCH_2 (fixed 200 MB/s/TiB): %s MB/s gets %s GiB', (megabytesPerSecond, expectedCapacity) => {
      // WHEN
      const { cache, capacity, tier } = sized({ deploymentType: fsx.LustreDeploymentType.SCRATCH_2, readRate: rate(megabytesPerSecond) });

      // THEN
      expect(capacity).toEqual(expectedCapacity);
      expect(tier).toBeUndefined();
      expect(cache.perUnitStorageThroughput).toEqual(200);
    });

    test('a large dataset raises the tier only as far as the read rate needs', () => {
      // WHEN: 20 TiB hold at 24000 GiB, where 125 MB/s/TiB give 3000 MB/s
      const { capacity, tier } = sized({ datasetSize: Size.tebibytes(20), readRate: rate(5000) });

      // THEN
      expect([capacity, tier]).toEqual([24000, 250]);
    });

    test('the reference job: 2 × ml.p3dn.24xlarge, 1000 samples/s per GPU of 110 KiB, 150 GiB of shards', () => {
      // GIVEN: 16 GPUs × 1000 × 112,640 bytes = 1802 MB/s, more than the 1200 MB/s of 1200 GiB at the top tier
      const readRate = ReadRate.forTraining({
        instance: TrainingInstance.P3DN_24XLARGE, instanceCount: 2, samplesPerSecondPerDevice: 1000, sampleSize: Size.kibibytes(110),
      });

      // WHEN
      const { cache, capacity, tier } = sized({ datasetSize: Size.gibibytes(150), readRate });

      // THEN
      expect([capacity, tier, cache.baselineThroughputMBps]).toEqual([2400, 1000, 2400]);
    });

    test('says what it chose in an info message', () => {
      // WHEN
      const { annotations } = sized({ readRate: rate(300) });

      // THEN
      annotations.hasInfo('*', Match.stringLikeRegexp('PERSISTENT_2: 1200 GiB × 250 MB/s/TiB = 300 MB/s baseline for a read rate of 300 MB/s'));
    });
  });

  describe('values the user fixed', () => {
    test('a fixed capacity gets the lowest tier that feeds the reads at that capacity', () => {
      // WHEN
      const { capacity, tier, annotations } = sized({ storageCapacityGiB: 4800, readRate: rate(1000) });

      // THEN: 4.8 × 250 = 1200 ≥ 1000 > 4.8 × 125 = 600
      expect([capacity, tier]).toEqual([4800, 250]);
      annotations.hasNoWarning('*', Match.stringLikeRegexp('cacheThroughputBelowReadRate'));
    });

    test('a fixed capacity too small for the reads at any tier gets the top tier and a warning with the fitting size', () => {
      // WHEN
      const { capacity, tier, annotations } = sized({ storageCapacityGiB: 1200, readRate: rate(2000) });

      // THEN
      expect([capacity, tier]).toEqual([1200, 1000]);
      annotations.hasWarning('*', Match.stringLikeRegexp(
        "1200 GiB × 1000 MB/s/TiB = 1200 MB/s baseline cannot feed the 2000 MB/s.*storageCapacityGiB: 2400 and perUnitStorageThroughput: 1000"));
      annotations.hasWarning('*', Match.stringLikeRegexp('cacheThroughputBelowReadRate'));
    });

    test('a fixed tier gets the capacity that feeds the reads at that tier', () => {
      // WHEN
      const { capacity, tier } = sized({ perUnitStorageThroughput: 125, readRate: rate(1000) });

      // THEN: 1000 MB/s / 125 MB/s/TiB = 8000 GiB → 9600
      expect([capacity, tier]).toEqual([9600, 125]);
    });

    test('a fixed tier still holds the dataset', () => {
      // WHEN
      const { capacity, tier } = sized({ perUnitStorageThroughput: 1000, readRate: rate(100), datasetSize: Size.gibibytes(3000) });

      // THEN
      expect([capacity, tier]).toEqual([4800, 1000]);
    });

    test('fixed capacity and tier that cannot feed the reads are kept, with a warning', () => {
      // WHEN
      const { capacity, tier, annotations } = sized({ storageCapacityGiB: 2400, perUnitStorageThroughput: 125, readRate: rate(500) });

      // THEN: 2.4 × 125 = 300 MB/s; 250 MB/s/TiB gives 600
      expect([capacity, tier]).toEqual([2400, 125]);
      annotations.hasWarning('*', Match.stringLikeRegexp('300 MB/s baseline cannot feed the 500 MB/s.*storageCapacityGiB: 1200 and perUnitStorageThroughput: 500'));
    });

    test('fixed capacity and tier that feed the reads give no warning', () => {
      // WHEN
      const { annotations } = sized({ storageCapacityGiB: 2400, perUnitStorageThroughput: 250, readRate: rate(600) });

      // THEN
      annotations.hasNoWarning('*', Match.stringLikeRegexp('cacheThroughputBelowReadRate'));
    });

    test('a SCRATCH_2 capacity that cannot feed the reads warns that bursts do not last', () => {
      // WHEN
      const { annotations } = sized({ deploymentType: fsx.LustreDeploymentType.SCRATCH_2, storageCapacityGiB: 1200, readRate: rate(1000) });

      // THEN: 1.2 × 200 = 240 MB/s; 1000 MB/s need 5000 GiB → 7200
      annotations.hasWarning('*', Match.stringLikeRegexp('240 MB/s baseline cannot feed the 1000 MB/s.*credits last\\); use storageCapacityGiB: 7200, or remove the values you fixed'));
    });
  });

  describe('deploy-time values', () => {
    test('a read rate known only at deploy time sizes by the dataset alone', () => {
      // GIVEN
      const readRate = ReadRate.perSecond(Size.mebibytes(Lazy.number({ produce: () => 5000 })));

      // WHEN
      const { capacity, tier, cache } = sized({ readRate, datasetSize: Size.gibibytes(2000) });

      // THEN
      expect([capacity, tier, cache.baselineThroughputMBps]).toEqual([2400, 125, 300]);
    });

    test('a dataset size known only at deploy time sizes by the read rate alone', () => {
      // GIVEN
      const datasetSize = Size.gibibytes(Lazy.number({ produce: () => 50_000 }));

      // WHEN
      const { capacity, tier } = sized({ datasetSize, readRate: rate(600) });

      // THEN
      expect([capacity, tier]).toEqual([1200, 500]);
    });

    test('a deploy-time capacity leaves the throughput unchecked and warns about nothing', () => {
      // GIVEN
      const storageCapacityGiB = Lazy.number({ produce: () => 1200 });

      // WHEN
      const { capacity, tier, cache, annotations } = sized({ storageCapacityGiB, readRate: rate(5000) });

      // THEN
      expect([capacity, tier, cache.baselineThroughputMBps]).toEqual([1200, 125, undefined]);
      annotations.hasNoWarning('*', Match.stringLikeRegexp('cacheThroughputBelowReadRate'));
    });
  });

  test('two caches of one bucket are sized independently', () => {
    // GIVEN
    const context = cacheTestStack();

    // WHEN
    const small = newCache(context, {}, 'Small');
    const fast = newCache(context, { readRate: rate(1000) }, 'Fast');

    // THEN
    expect([small.storageCapacityGiB, small.perUnitStorageThroughput]).toEqual([1200, 125]);
    expect([fast.storageCapacityGiB, fast.perUnitStorageThroughput]).toEqual([1200, 1000]);
    expect(fast).toBeInstanceOf(LustreDatasetCache);
  });
});
