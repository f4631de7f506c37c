import type { Size} from 'aws-cdk-lib';
import { SizeRoundingBehavior, Token } from 'aws-cdk-lib';
import type { TrainingInstance } from '../instances/training-instance';
import { ValidationError } from '../private/errors';
import { isResolved } from '../private/validation';

/**
 * What a training job reads per second, from which `ReadRate.forTraining` derives its read rate.
 */
export interface TrainingReadOptions {
  /** The instance type of the job: its GPUs (or Trainium devices) are the readers. */
  readonly instance: TrainingInstance;

  /**
   * Instances in the job.
   *
   * @default 1
   */
  readonly instanceCount?: number;

  /** Samples each GPU (or Trainium device) consumes per second at full speed, e.g. 1000 images/s. */
  readonly samplesPerSecondPerDevice: number;

  /** Average size of one sample as stored, e.g. `Size.kibibytes(110)` for an ImageNet JPEG. */
  readonly sampleSize: Size;
}

/**
 * The rate at which training reads its data, for sizing a file system that must keep up.
 */
export class ReadRate {
  /**
   * A fixed rate: this much data per second, e.g. `ReadRate.perSecond(Size.mebibytes(800))`.
   */
  public static perSecond(size: Size): ReadRate {
    if (size.isUnresolved()) return new ReadRate(undefined);
    return new ReadRate(size.toBytes({ rounding: SizeRoundingBehavior.NONE }));
  }

  /**
   * The rate of a job that keeps every device busy: instances × devices per instance ×
   * samples per second per device × sample size.
   */
  public static forTraining(options: TrainingReadOptions): ReadRate {
    const instanceCount = options.instanceCount ?? 1;
    const { instance, samplesPerSecondPerDevice, sampleSize } = options;
    if (isResolved(instanceCount) && (!Number.isInteger(instanceCount) || instanceCount < 1)) {
      throw new ValidationError('InvalidReadRate', `instanceCount must be a whole number of at least 1, got ${instanceCount}`);
    }
    if (instance.acceleratorCount === 0) {
      throw new ValidationError('InvalidReadRate',
        `instance ${instance.instanceType} has no GPU or Trainium device to read for; use ReadRate.perSecond() for CPU training`);
    }
    if (isResolved(samplesPerSecondPerDevice) && !(samplesPerSecondPerDevice > 0 && Number.isFinite(samplesPerSecondPerDevice))) {
      throw new ValidationError('InvalidReadRate',
        `samplesPerSecondPerDevice must be a finite number above 0, got ${samplesPerSecondPerDevice}`);
    }
    const sampleBytes = sampleSize.isUnresolved() ? undefined : sampleSize.toBytes({ rounding: SizeRoundingBehavior.NONE });
    if (sampleBytes !== undefined && !(sampleBytes > 0)) {
      throw new ValidationError('InvalidReadRate', `sampleSize must be more than 0 bytes, got ${sampleBytes}`);
    }
    if (Token.isUnresolved(instanceCount) || Token.isUnresolved(samplesPerSecondPerDevice) || sampleBytes === undefined) {
      return new ReadRate(undefined);
    }
    return new ReadRate(instanceCount * instance.acceleratorCount * samplesPerSecondPerDevice * sampleBytes);
  }

  /** Bytes per second; undefined when a value it is made of is only known at deploy time. */
  public readonly bytesPerSecond?: number;

  private constructor(bytesPerSecond: number | undefined) {
    if (bytesPerSecond !== undefined && !(bytesPerSecond > 0 && Number.isFinite(bytesPerSecond))) {
      throw new ValidationError('InvalidReadRate',
        `a read rate must be a finite number of bytes per second above 0, got ${bytesPerSecond}`);
    }
    this.bytesPerSecond = bytesPerSecond;
  }

  /** The rate in MB/s (10^6 bytes per second), the unit of FSx throughput; undefined when unknown. */
  public get megabytesPerSecond(): number | undefined {
    return this.bytesPerSecond === undefined ? undefined : this.bytesPerSecond / 1e6;
  }
}
