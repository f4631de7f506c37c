import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * An absolute path with symbolic links resolved: the part that exists through `realpath`, the rest
 * (folders still to be made, the target of a link that leads nowhere yet) as given.
 */
export function resolveExistingPath(given: string): string {
  const missing: string[] = [];
  let existing = path.resolve(given);
  for (;;) {
    try {
      return path.join(fs.realpathSync(existing), ...missing);
    } catch (error) {
      // A part that is missing, or a link that loops or leads nowhere: resolve what lies above it.
      if (path.dirname(existing) === existing) throw error;
      missing.unshift(path.basename(existing));
      existing = path.dirname(existing);
    }
  }
}

/** Whether the absolute path `inner` is `outer` or lies under it. */
export function isPathInside(inner: string, outer: string): boolean {
  const relative = path.relative(outer, inner);
  return relative === '' || (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative));
}
