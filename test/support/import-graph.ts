import * as fs from 'fs';
import * as path from 'path';

/** One import of a module: what it names, and whether it is erased at compile time. */
export interface ImportEdge {
  /** A repository-relative `.ts` path for a relative import, else the package name as written. */
  readonly target: string;
  readonly typeOnly: boolean;
}

const ROOT = path.join(__dirname, '..', '..');
// `import … from '…'` and `export … from '…'`, over several lines; bare `import '…'` has no bindings.
const IMPORT = /^(import|export)\s+(type\s+)?([^;]*?)\s+from\s+'([^']+)'/gms;

/** The `.ts` files under a repository folder, relative to the repository. */
export function sourceFiles(folder: string): string[] {
  const walk = (dir: string): string[] => fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const child = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'dist' || entry.name === 'node_modules' ? [] : walk(child);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [child] : [];
  });
  return walk(folder).sort();
}

/** The imports of one file (relative ones resolved to `.ts` files). */
export function importsOf(file: string): ImportEdge[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)].map((match) => {
    const specifier = match[4];
    return { target: specifier.startsWith('.') ? resolve(file, specifier) : specifier, typeOnly: isTypeOnly(match[2], match[3]) };
  });
}

/** The value imports between the given files: what `require` loads at run time. */
export function valueGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  return new Map(files.map((file) => [file, importsOf(file).filter((edge) => !edge.typeOnly && known.has(edge.target)).map((edge) => edge.target)]));
}

/** Every circle of the graph (strongly connected components of two or more files, or a file importing itself). */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) circles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}

/** The files that loading `start` loads, itself included. */
export function loadedBy(graph: ReadonlyMap<string, readonly string[]>, start: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const pending = [...start];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    pending.push(...graph.get(file) ?? []);
  }
  return seen;
}

function resolve(from: string, specifier: string): string {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  for (const candidate of [`${base}.ts`, path.posix.join(base, 'index.ts')]) {
    if (fs.existsSync(path.join(ROOT, candidate))) return candidate;
  }
  return base;
}

/** `import type {…}`, or braces whose every name is marked `type`. */
function isTypeOnly(typeKeyword: string | undefined, bindings: string): boolean {
  if (typeKeyword) return true;
  const braces = /^\{([^}]*)\}$/.exec(bindings.trim());
  if (!braces) return false;
  const names = braces[1].split(',').map((name) => name.trim()).filter((name) => name !== '');
  return names.length > 0 && names.every((name) => name.startsWith('type '));
}
