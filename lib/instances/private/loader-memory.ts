import { Size } from 'aws-cdk-lib';

/**
 * Default memory budget of one data-loader worker: a worker holds its own copy of the dataset
 * object plus `prefetch_factor` (2) decoded batches; 256 images of 224×224×3 float32 are
 * ~150 MB a batch, so 2 GiB leaves room for the interpreter and augmentation buffers.
 */
export const DEFAULT_MEMORY_PER_WORKER = Size.gibibytes(2);
