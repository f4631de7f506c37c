import { compareCodePointOrder } from './key-order';
import { PlanError } from './plan-error';
import { SourceFile } from './plan-types';

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
  const labels = new Int32Array(files.length);
  const provisional = new Map<string, number>();
  let currentPrefix = '';
  let currentIndex = -1;
  for (let i = 0; i < files.length; i++) {
    const key = files[i].key;
    if (currentIndex < 0 || !key.startsWith(currentPrefix)) {
      const name = className(key);
      currentPrefix = `${name}/`;
      let index = provisional.get(name);
      if (index === undefined) {
        index = provisional.size;
        provisional.set(name, index);
      }
      currentIndex = index;
    }
    labels[i] = currentIndex;
  }

  const names = [...provisional.keys()].sort(compareCodePointOrder);
  const finalIndex = new Int32Array(names.length);
  names.forEach((name, index) => {
    finalIndex[provisional.get(name)!] = index;
  });
  for (let i = 0; i < labels.length; i++) labels[i] = finalIndex[labels[i]];

  // fromEntries defines own properties, so a class named `__proto__` is kept as a name.
  const labelMap: Record<string, number> = Object.fromEntries(names.map((name, index) => [name, index]));
  return { labels, labelMap };
}

function className(key: string): string {
  const slash = key.indexOf('/');
  if (slash < 0) {
    throw new PlanError(
      `labels 'folder' takes the class from the first folder of each key, but '${key}' is at the root of the source: `
      + "move it into a class folder (e.g. 'cat/…') or use labels 'none'",
    );
  }
  if (slash === 0) {
    throw new PlanError(
      `labels 'folder' takes the class from the first folder of each key, but '${key}' starts with '/' (an empty class name): `
      + "list keys relative to the source root or use labels 'none'",
    );
  }
  return key.slice(0, slash);
}
