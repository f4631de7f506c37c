import type { Size} from 'aws-cdk-lib';
import { SizeRoundingBehavior, Token } from 'aws-cdk-lib';
import type { ErrorCode } from '../../private/error-codes';
import { ValidationError } from '../../private/errors';
import { requireKnown } from '../../private/validation';
import type { DatasetProfile} from '../dataset-profile';
import { DatasetFormat, SampleEncoding } from '../dataset-profile';
import type { PlannedDataset } from '../io-plan';

/** A dataset profile with its sizes derived and checked. */
export interface ResolvedDataset extends PlannedDataset {
  readonly sampleEncoding: SampleEncoding;
}

/** The profile's defaults and checks: each error names the field, the value and what is allowed. */
export function resolveDataset(profile: DatasetProfile): ResolvedDataset {
  const { objectCount, totalSize, meanObjectSize } = profile;
  requireKnown('dataset.objectCount', Token.isUnresolved(objectCount));
  if (!Number.isSafeInteger(objectCount) || objectCount < 1) {
    throw new ValidationError('InvalidObjectCount', `dataset.objectCount must be a whole number of at least 1, got ${objectCount}`);
  }
  if (totalSize && meanObjectSize) {
    throw new ValidationError('DatasetSizeAndMeanSize',
      'give dataset.totalSize or dataset.meanObjectSize, not both: the one follows from the other and objectCount');
  }
  if (!totalSize && !meanObjectSize) {
    throw new ValidationError('MissingDatasetSize', 'dataset needs totalSize or meanObjectSize, got neither');
  }
  const totalBytes = totalSize
    ? positiveBytes('dataset.totalSize', totalSize)
    : positiveBytes('dataset.meanObjectSize', meanObjectSize!) * objectCount;
  const format = profile.format ?? DatasetFormat.FILES;
  if (profile.recordCount !== undefined) {
    requireKnown('dataset.recordCount', Token.isUnresolved(profile.recordCount));
    if (!Number.isSafeInteger(profile.recordCount) || profile.recordCount < 1) {
      throw new ValidationError('InvalidRecordCount', `dataset.recordCount must be a whole number of at least 1, got ${profile.recordCount}`);
    }
  }
  return {
    objectCount,
    totalBytes,
    meanObjectBytes: totalBytes / objectCount,
    format,
    recordCount: profile.recordCount ?? (format === DatasetFormat.FILES ? objectCount : undefined),
    sampleEncoding: profile.sampleEncoding ?? SampleEncoding.JPEG,
  };
}

/** Epochs, a whole number of at least 1. */
export function resolveEpochs(epochs: number | undefined): number {
  return wholeNumberFromOne('epochs', 'InvalidEpochs', epochs);
}

/** Jobs a month, a whole number of at least 1. */
export function resolveJobsPerMonth(jobs: number | undefined): number {
  return wholeNumberFromOne('jobsPerMonth', 'InvalidJobsPerMonth', jobs);
}

function wholeNumberFromOne(prop: string, code: ErrorCode, given: number | undefined): number {
  const value = given ?? 1;
  requireKnown(prop, Token.isUnresolved(value));
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new ValidationError(code, `${prop} must be a whole number of at least 1, got ${value}`);
  }
  return value;
}

/** A dollar limit per job, above 0. */
export function resolveMaxDollars(dollars: number | undefined): number | undefined {
  if (dollars === undefined) return undefined;
  requireKnown('maxDollarsPerJob', Token.isUnresolved(dollars));
  if (!(Number.isFinite(dollars) && dollars > 0)) {
    throw new ValidationError('InvalidMaxDollars', `maxDollarsPerJob must be a finite number of US dollars above 0, got ${dollars}`);
  }
  return dollars;
}

/** Expected samples per second per device, a finite number above 0; it needs the dataset's record count. */
export function resolveSamplesPerSecond(samples: number | undefined, dataset: ResolvedDataset): number | undefined {
  if (samples === undefined) return undefined;
  requireKnown('samplesPerSecondPerDevice', Token.isUnresolved(samples));
  if (!(samples > 0 && Number.isFinite(samples))) {
    throw new ValidationError('InvalidSamplesPerSecond', `samplesPerSecondPerDevice must be a finite number above 0, got ${samples}`);
  }
  if (dataset.recordCount === undefined) {
    throw new ValidationError('RecordCountRequired',
      `samplesPerSecondPerDevice needs dataset.recordCount for a ${dataset.format} dataset, whose objects are shards of many ` +
      'samples: give the number of records to estimate the read rate and the training time');
  }
  return samples;
}

function positiveBytes(name: string, size: Size): number {
  requireKnown(name, size.isUnresolved());
  const bytes = size.toBytes({ rounding: SizeRoundingBehavior.NONE });
  if (!(bytes > 0 && Number.isFinite(bytes))) {
    throw new ValidationError('InvalidDatasetSize', `${name} must be more than 0 bytes, got ${bytes} bytes`);
  }
  return bytes;
}
