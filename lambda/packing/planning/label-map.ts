import { compareCodePointOrder } from '../../io/key-order';
import { PlanError } from './plan-error';
import type { SourceFile } from './plan-types';

/** Class labels of the files, taken from their first folder. */
export interface FolderLabels {
  /** Class index of each file, by position in the given list. */
  readonly labels: Int32Array;
  /** Class name → index, the names in code-point order (index 0 is the first name). */
  readonly labelMap: Record<string, number>;
}

/**
 * Labels each file with its first path segment as the class: `cat/0001.jpg` → `cat`. Classes are
 * numbered in code-point order of their names, so the numbering depends only on the set of
 * names. Keys at the root (no folder) cannot be labelled and fail, naming the key.
 *
 * Fast on files sorted by key: the files of one class are then consecutive, so a class name is
 * cut out and looked up only where the class changes.
 */
export function labelByFolder(files: readonly SourceFile[]): FolderLabels {
  const provisional = new Map<string, number>();
  const labels = labelEachByClass(files, (name) => {
    let index = provisional.get(name);
    if (index === undefined) {
      index = provisional.size;
      provisional.set(name, index);
    }
    return index;
  });
  const labelMap = labelMapOf(provisional.keys());
  const finalIndex = new Int32Array(provisional.size);
  for (const [name, index] of provisional) finalIndex[index] = labelMap[name];
  for (let i = 0; i < labels.length; i++) labels[i] = finalIndex[labels[i]];
  return { labels, labelMap };
}

/** Class name → index, the names numbered in code-point order. */
export function labelMapOf(names: Iterable<string>): Record<string, number> {
  const sorted = [...new Set(names)].sort(compareCodePointOrder);
  // fromEntries defines own properties, so a class named `__proto__` is kept as a name.
  return Object.fromEntries(sorted.map((name, index) => [name, index]));
}

/**
 * Labels files of part of a listing by the label map of the whole (see {@link labelMapOf}); fast
 * on files sorted by key, as {@link labelByFolder}.
 */
export function labelsByMap(files: readonly SourceFile[], labelMap: Record<string, number>): Int32Array {
  return labelEachByClass(files, (name, key) => {
    if (!Object.hasOwn(labelMap, name)) throw new PlanError(`class '${name}' of '${key}' is not in the label map of the listing`);
    return labelMap[name];
  });
}

/** `indexOf` of each file's class, asked only where the class changes from the file before. */
function labelEachByClass(files: readonly SourceFile[], indexOf: (name: string, key: string) => number): Int32Array {
  const labels = new Int32Array(files.length);
  let currentPrefix = '';
  let currentIndex = -1;
  for (let i = 0; i < files.length; i++) {
    const key = files[i].key;
    if (currentIndex < 0 || !key.startsWith(currentPrefix)) {
      const name = className(key);
      currentPrefix = `${name}/`;
      currentIndex = indexOf(name, key);
    }
    labels[i] = currentIndex;
  }
  return labels;
}

/** The class of a key: its first folder. Keys at the root, or whose first folder is empty, `.` or `..`, fail, naming the key. */
export function className(key: string): string {
  const slash = key.indexOf('/');
  if (slash < 0) {
    throw new PlanError(
      `labels 'folder' takes the class from the first folder of each key, but '${key}' is at the root of the source: `
      + "move it into a class folder (e.g. 'cat/…'), leave it out with an exclude pattern (--exclude on the CLI) or use labels 'none'",
    );
  }
  if (slash === 0) {
    throw new PlanError(
      `labels 'folder' takes the class from the first folder of each key, but '${key}' starts with '/' (an empty class name): `
      + "list keys relative to the source root or use labels 'none'",
    );
  }
  const name = key.slice(0, slash);
  if (name === '.' || name === '..') {
    // A folder cannot be named so: only an S3 key can start with it, and a class '.' or '..' would be a path, not a name.
    throw new PlanError(
      `labels 'folder' takes the class from the first folder of each key, but '${key}' starts with '${name}/' (a class named '${name}'): `
      + "rename the object to start with its class folder (e.g. 'cat/…') or use labels 'none'",
    );
  }
  return name;
}
