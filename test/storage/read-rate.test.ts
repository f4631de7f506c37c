import { Lazy, Size } from 'aws-cdk-lib';
import { ReadRate, TrainingInstance } from '../../lib';

describe('ReadRate', () => {
  test('perSecond is the size per second, in bytes and MB/s', () => {
    // WHEN
    const rate = ReadRate.perSecond(Size.mebibytes(800));

    // THEN
    expect(rate.bytesPerSecond).toEqual(800 * 2 ** 20);
    expect(rate.megabytesPerSecond).toBeCloseTo(838.8608, 6);
  });

  test('forTraining multiplies instances, devices per instance, samples per second and sample size', () => {
    // WHEN
    const rate = ReadRate.forTraining({
      instance: TrainingInstance.P3DN_24XLARGE, instanceCount: 2, samplesPerSecondPerDevice: 1000, sampleSize: Size.kibibytes(110),
    });

    // THEN: 2 × 8 V100 × 1000 × 112,640 bytes
    expect(rate.bytesPerSecond).toEqual(1_802_240_000);
  });

  test('forTraining counts Trainium devices and defaults to one instance', () => {
    // WHEN
    const rate = ReadRate.forTraining({ instance: TrainingInstance.TRN1_32XLARGE, samplesPerSecondPerDevice: 10, sampleSize: Size.mebibytes(1) });

    // THEN
    expect(rate.bytesPerSecond).toEqual(16 * 10 * 2 ** 20);
  });

  test('forTraining rejects an instance without GPU or Trainium device', () => {
    // GIVEN
    const cpu = TrainingInstance.of('ml.c5.18xlarge', { vcpus: 72, memoryGiB: 144 });

    // WHEN / THEN
    expect(() => ReadRate.forTraining({ instance: cpu, samplesPerSecondPerDevice: 10, sampleSize: Size.kibibytes(1) }))
      .toThrow(/InvalidReadRate.*ml.c5.18xlarge has no GPU or Trainium device/);
  });

  test.each([0, -5, Number.POSITIVE_INFINITY, Number.NaN])('forTraining rejects %s samples per second', (samplesPerSecondPerDevice) => {
    expect(() => ReadRate.forTraining({ instance: TrainingInstance.G5_2XLARGE, samplesPerSecondPerDevice, sampleSize: Size.kibibytes(1) }))
      .toThrow(/InvalidReadRate.*samplesPerSecondPerDevice must be a finite number above 0/);
  });

  test.each([0, 1.5, -1])('forTraining rejects an instance count of %s', (instanceCount) => {
    expect(() => ReadRate.forTraining({
      instance: TrainingInstance.G5_2XLARGE, instanceCount, samplesPerSecondPerDevice: 1, sampleSize: Size.kibibytes(1),
    })).toThrow(/InvalidReadRate.*instanceCount must be a whole number of at least 1/);
  });

  test('forTraining rejects an empty sample', () => {
    expect(() => ReadRate.forTraining({ instance: TrainingInstance.G5_2XLARGE, samplesPerSecondPerDevice: 1, sampleSize: Size.bytes(0) }))
      .toThrow(/InvalidReadRate.*sampleSize must be more than 0 bytes/);
  });

  test('perSecond rejects zero', () => {
    expect(() => ReadRate.perSecond(Size.bytes(0))).toThrow(/InvalidReadRate.*above 0, got 0/);
  });

  test('accepts the smallest rate, one byte per second', () => {
    expect(ReadRate.perSecond(Size.bytes(1)).bytesPerSecond).toEqual(1);
  });

  test.each([
    ['the size', () => ReadRate.perSecond(Size.gibibytes(Lazy.number({ produce: () => 1 })))],
    ['the instance count', () => ReadRate.forTraining({
      instance: TrainingInstance.G5_2XLARGE, instanceCount: Lazy.number({ produce: () => 2 }), samplesPerSecondPerDevice: 1, sampleSize: Size.kibibytes(1),
    })],
    ['the samples per second', () => ReadRate.forTraining({
      instance: TrainingInstance.G5_2XLARGE, samplesPerSecondPerDevice: Lazy.number({ produce: () => 0 }), sampleSize: Size.kibibytes(1),
    })],
    ['the sample size', () => ReadRate.forTraining({
      instance: TrainingInstance.G5_2XLARGE, samplesPerSecondPerDevice: 1, sampleSize: Size.kibibytes(Lazy.number({ produce: () => 0 })),
    })],
  ])('is unknown, not rejected, when %s is known only at deploy time', (_what, make) => {
    // WHEN
    const rate = make();

    // THEN
    expect(rate.bytesPerSecond).toBeUndefined();
    expect(rate.megabytesPerSecond).toBeUndefined();
  });
});
