/**
 * How a channel's data reaches the training container.
 *
 * @see https://docs.aws.amazon.com/sagemaker/latest/dg/model-access-training-data.html
 */
export enum InputMode {
  /** Download everything to the instance's storage before training starts (local NVMe when it has one). */
  FILE = 'File',
  /** Mount the S3 prefix read-only and stream objects on first read: short start, best for sequential reads. */
  FAST_FILE = 'FastFile',
  /** Stream objects through a FIFO per epoch (`/opt/ml/input/data/<channel>_<epoch>`), reshuffled each epoch with ShuffleConfig. */
  PIPE = 'Pipe',
}
