import type { TrainingInstance } from '../training-instance';
import { GIB } from '../../contract/units';

/**
 * Room File-mode data leaves on the instance's storage: 10 % of the data plus 50 GiB. SageMaker keeps
 * checkpoints (`/opt/ml/checkpoints`), the model (`/opt/ml/model`), outputs and the container's
 * scratch on the same storage as the downloaded channels (SageMaker developer guide,
 * model-train-storage-env-var-summary). The same rule sizes a TrainingJob's default EBS volume.
 */
export const FILE_MODE_HEADROOM = 1.1;
export const FILE_MODE_RESERVE_BYTES = 50 * GIB;

/**
 * Largest dataset planned in File mode on an EBS-backed instance (ml.p3.2/8/16xlarge): SageMaker's
 * guide suggests File mode for datasets "less than 50-100 GB" (developer guide, "Best practices for
 * choosing data source and input mode"). Without local NVMe there is no fast scratch that would
 * justify downloading more.
 */
export const EBS_FILE_MODE_MAX_BYTES = 100e9;

/** Bytes of storage File-mode data needs: the data plus the headroom. */
export function fileModeFootprintBytes(dataBytes: number): number {
  return dataBytes * FILE_MODE_HEADROOM + FILE_MODE_RESERVE_BYTES;
}

/** Whether `dataBytes` of File-mode data per instance belong on the instance's storage. */
export function fitsFileMode(instance: TrainingInstance, dataBytes: number): boolean {
  return instance.hasLocalNvme
    ? fileModeFootprintBytes(dataBytes) <= instance.localNvmeBytes
    : dataBytes <= EBS_FILE_MODE_MAX_BYTES;
}

/** Why `size` of File-mode data fits (or does not fit) the instance, in words. */
export function describeFileModeFit(instance: TrainingInstance, size: string, fits: boolean): string {
  if (instance.hasLocalNvme) {
    return `${size} (+10 % + 50 GiB for checkpoints and outputs) ${fits ? 'fits' : 'does not fit'} the ` +
      `${instance.localNvmeGB} GB of local NVMe of ${instance.instanceType}`;
  }
  return `${size} is ${fits ? 'within' : 'more than'} the ${EBS_FILE_MODE_MAX_BYTES / 1e9} GB SageMaker suggests for File mode ` +
    `on the EBS volume of ${instance.instanceType}, which has no local NVMe`;
}

/**
 * Most a gp2 EBS volume delivers, the storage SageMaker gives EBS-backed instances (250 MiB/s; Amazon
 * EBS user guide, "General Purpose SSD volumes"): File-mode data read from it faster than that starves the GPUs.
 */
export const EBS_GP2_MAX_BYTES_PER_SECOND = 250 * 2 ** 20;
