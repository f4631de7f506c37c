/**
 * Where the records' class labels come from.
 */
export enum RecordLabels {
  /** The first folder of each key is the class (`cat/0001.jpg` → `cat`); names sorted → 0..n-1. */
  FOLDER = 'folder',
  /** No labels (-1). */
  NONE = 'none',
}
