/**
 * Where the records' class labels come from.
 */
export enum RecordLabels {
  /** The first folder of each key is the class (`cat/0001.jpg` → `cat`); names sorted → 0..n-1. */
  FOLDER = 'folder',
  /** No labels (-1). */
  NONE = 'none',
  /**
   * A label file beside the data (`ShardedDataset` `labelFile`, `training-io pack --label-file`): a CSV
   * with the header `key,label` or JSON lines `{"key": ..., "label": ...}`, the key being the sample's
   * (its path below the source prefix up to the first dot of its name); names sorted → 0..n-1.
   */
  FILE = 'file',
}
