import type { Size} from 'aws-cdk-lib';
import { SizeRoundingBehavior } from 'aws-cdk-lib';
import * as fsx from 'aws-cdk-lib/aws-fsx';
import type { Construct } from 'constructs';
import type { CacheDeploymentType} from '../../instances/private/lustre-sizing';
import { isLegalCapacity, THROUGHPUT_TIERS } from '../../instances/private/lustre-sizing';
import { ValidationError } from '../../private/errors';
import { isResolved, validateMebibytes } from '../../private/validation';
import type { LustreDatasetCacheProps } from '../lustre-dataset-cache';

/** ImportedFileChunkSize of a data repository association, in MiB (FSx API `Megabytes`). */
const MAX_CHUNK_MIB = 512000;

/** The synth-time rules of a dataset cache: each names the prop, the value and what is allowed. */
export function validateCacheProps(scope: Construct, props: LustreDatasetCacheProps, deploymentType: fsx.LustreDeploymentType): void {
  validateDeploymentType(scope, deploymentType);
  const type = deploymentType as CacheDeploymentType;
  validateVersion(scope, props.fileSystemTypeVersion);
  validateStorageCapacity(scope, type, props.storageCapacityGiB);
  validateThroughput(scope, type, props.perUnitStorageThroughput);
  validateCapacityHoldsDataset(scope, props.storageCapacityGiB, props.datasetSize);
  validateKey(scope, type, props);
  validateMebibytes(scope, 'InvalidImportedFileChunkSize', 'importedFileChunkSize', props.importedFileChunkSize, 1, MAX_CHUNK_MIB);
}

function validateDeploymentType(scope: Construct, type: fsx.LustreDeploymentType): void {
  if (Object.hasOwn(THROUGHPUT_TIERS, type)) return;
  throw new ValidationError('UnsupportedDeploymentType',
    `deploymentType must be SCRATCH_2, PERSISTENT_1 or PERSISTENT_2, got ${type}: ` +
    'SCRATCH_1 cannot have data repository associations; use SCRATCH_2 for a short-lived cache', scope);
}

function validateVersion(scope: Construct, version: fsx.FileSystemTypeVersion | undefined): void {
  if (version !== fsx.FileSystemTypeVersion.V_2_10) return;
  throw new ValidationError('LustreVersionWithoutAssociations',
    `fileSystemTypeVersion must be 2.12 or 2.15, got ${version}: Lustre 2.10 file systems cannot have data repository ` +
    'associations; remove fileSystemTypeVersion to get 2.15', scope);
}

function validateStorageCapacity(scope: Construct, type: CacheDeploymentType, capacity: number | undefined): void {
  if (!isResolved(capacity) || isLegalCapacity(capacity)) return;
  throw new ValidationError('InvalidStorageCapacity',
    `storageCapacityGiB must be 1200, 2400 or a multiple of 2400 for ${type} SSD storage, got ${capacity}; ` +
    'or remove it to size the cache from datasetSize and readRate', scope);
}

function validateThroughput(scope: Construct, type: CacheDeploymentType, throughput: number | undefined): void {
  if (!isResolved(throughput)) return;
  const { tiers, configurable } = THROUGHPUT_TIERS[type];
  if (!configurable) {
    throw new ValidationError('InvalidPerUnitStorageThroughput',
      `perUnitStorageThroughput cannot be set for ${type}, got ${throughput}: its baseline is a fixed ${tiers[0]} MB/s per TiB; ` +
      'remove it, or use PERSISTENT_2 to choose the throughput', scope);
  }
  if (!tiers.includes(throughput)) {
    throw new ValidationError('InvalidPerUnitStorageThroughput',
      `perUnitStorageThroughput must be one of ${tiers.join(', ')} (MB/s per TiB) for ${type}, got ${throughput}`, scope);
  }
}

function validateCapacityHoldsDataset(scope: Construct, capacity: number | undefined, datasetSize: Size | undefined): void {
  if (!isResolved(capacity) || !datasetSize || datasetSize.isUnresolved()) return;
  const datasetGiB = datasetSize.toGibibytes({ rounding: SizeRoundingBehavior.NONE });
  if (capacity >= datasetGiB) return;
  throw new ValidationError('StorageCapacityBelowDatasetSize',
    `storageCapacityGiB (${capacity}) must hold the ${Math.ceil(datasetGiB)} GiB of datasetSize: reads of the files that ` +
    'do not fit fail; raise storageCapacityGiB, or remove it to size the cache from datasetSize', scope);
}

function validateKey(scope: Construct, type: CacheDeploymentType, props: LustreDatasetCacheProps): void {
  if (!props.kmsKey || type !== fsx.LustreDeploymentType.SCRATCH_2) return;
  throw new ValidationError('KmsKeyOnScratchFileSystem',
    'kmsKey cannot be used with SCRATCH_2: scratch file systems are always encrypted with an FSx-managed key; ' +
    'remove kmsKey, or use PERSISTENT_2 to encrypt with your key', scope);
}
