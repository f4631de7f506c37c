import {
  FSX_PERSISTENT_2_GB_MONTH, FSX_SCRATCH_2_GB_MONTH, INSTANCE_HOURLY, LAMBDA_GB_SECOND, LAMBDA_PER_MILLION_REQUESTS,
  S3_GET_PER_1000, S3_LIST_PER_1000, S3_PUT_PER_1000, S3_STANDARD_GB_MONTH, SFN_PER_1000_TRANSITIONS,
} from '../../contract/prices';
import { ValidationError } from '../../private/errors';
import { requireKnown } from '../../private/validation';
import { Token } from 'aws-cdk-lib';
import type { PriceOverrides } from '../price-overrides';

/** Every price the planner reads, the table's with the user's overrides applied. */
export interface ResolvedPrices {
  /** $/hour of an instance type; undefined when neither the table nor the overrides know it. */
  readonly instanceHourly: (instanceType: string) => number | undefined;
  readonly fsxScratch2GbMonth: number;
  /** $/GB-month of a PERSISTENT_2 tier (MB/s/TiB). */
  readonly fsxPersistent2GbMonth: (tier: number) => number;
  readonly s3StorageGbMonth: number;
  readonly s3GetPer1000: number;
  readonly s3PutPer1000: number;
  readonly s3ListPer1000: number;
  readonly lambdaGbSecond: number;
  readonly lambdaPerMillionRequests: number;
  readonly sfnPer1000Transitions: number;
}

function price(name: string, value: number | undefined, table: number): number {
  if (value === undefined) return table;
  requireKnown(name, Token.isUnresolved(value));
  if (!(Number.isFinite(value) && value >= 0)) {
    throw new ValidationError('InvalidPrice', `${name} must be a finite number of US dollars, 0 or more, got ${value}`);
  }
  return value;
}

/** The table's prices under the user's overrides; each override checked, its message naming the field. */
export function resolvePrices(overrides: PriceOverrides = {}): ResolvedPrices {
  const instances = new Map<string, number>();
  (overrides.instances ?? []).forEach((entry, index) => {
    instances.set(entry.instanceType, price(`prices.instances[${index}].dollarsPerHour`, entry.dollarsPerHour, 0));
  });
  const tiers = new Map<number, number>();
  (overrides.fsxPersistent2 ?? []).forEach((entry, index) => {
    if (FSX_PERSISTENT_2_GB_MONTH[entry.perUnitStorageThroughput] === undefined) {
      throw new ValidationError('InvalidPrice', `prices.fsxPersistent2[${index}].perUnitStorageThroughput must be one of ` +
        `${Object.keys(FSX_PERSISTENT_2_GB_MONTH).join(', ')} MB/s/TiB, got ${entry.perUnitStorageThroughput}`);
    }
    tiers.set(entry.perUnitStorageThroughput, price(`prices.fsxPersistent2[${index}].dollarsPerGbMonth`, entry.dollarsPerGbMonth, 0));
  });
  return {
    instanceHourly: (type) => instances.get(type) ?? INSTANCE_HOURLY[type]?.dollars,
    fsxScratch2GbMonth: price('prices.fsxScratch2DollarsPerGbMonth', overrides.fsxScratch2DollarsPerGbMonth, FSX_SCRATCH_2_GB_MONTH.dollars),
    fsxPersistent2GbMonth: (tier) => tiers.get(tier) ?? FSX_PERSISTENT_2_GB_MONTH[tier].dollars,
    s3StorageGbMonth: price('prices.s3StorageDollarsPerGbMonth', overrides.s3StorageDollarsPerGbMonth, S3_STANDARD_GB_MONTH.dollars),
    s3GetPer1000: price('prices.s3GetDollarsPer1000', overrides.s3GetDollarsPer1000, S3_GET_PER_1000.dollars),
    s3PutPer1000: price('prices.s3PutDollarsPer1000', overrides.s3PutDollarsPer1000, S3_PUT_PER_1000.dollars),
    s3ListPer1000: price('prices.s3ListDollarsPer1000', overrides.s3ListDollarsPer1000, S3_LIST_PER_1000.dollars),
    lambdaGbSecond: price('prices.lambdaDollarsPerGbSecond', overrides.lambdaDollarsPerGbSecond, LAMBDA_GB_SECOND.dollars),
    lambdaPerMillionRequests: price('prices.lambdaDollarsPerMillionRequests', overrides.lambdaDollarsPerMillionRequests,
      LAMBDA_PER_MILLION_REQUESTS.dollars),
    sfnPer1000Transitions: price('prices.stepFunctionsDollarsPer1000Transitions', overrides.stepFunctionsDollarsPer1000Transitions,
      SFN_PER_1000_TRANSITIONS.dollars),
  };
}
