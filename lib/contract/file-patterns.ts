/**
 * Include and exclude globs over a source's keys (relative to the source root, `/`-separated):
 * `--include`/`--exclude` on the CLI, `include`/`exclude` on ShardedDataset, and the planner's
 * environment. One set of rules, checked here for all three; the engine matches with picomatch
 * (lambda/packing/listing/filtered-source.ts).
 */
export interface FilePatterns {
  /** A file is packed only if it matches one of these (default: every file). */
  readonly include?: readonly string[];
  /** A file that matches one of these is left out, whatever `include` says. */
  readonly exclude?: readonly string[];
}

/** Longer than any S3 key (1,024 bytes): a pattern past this is a mistake. */
const MAX_PATTERN_LENGTH = 1024;

/** What is wrong with one pattern, named as `name` (e.g. `--exclude`, `exclude[2]`), or undefined when it is sound. */
export function filePatternProblem(name: string, pattern: string): string | undefined {
  const shown = pattern.length > 80 ? `${pattern.slice(0, 80)}…` : pattern;
  const allowed = 'a glob over keys relative to the source root, such as README.txt, **/*.txt or cat/**';
  if (pattern.length === 0 || pattern.length > MAX_PATTERN_LENGTH) return `${name} must be 1-${MAX_PATTERN_LENGTH} characters (${allowed}), got '${shown}'`;
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(pattern)) return `${name} must not contain control characters, got ${JSON.stringify(shown)}`;
  if (pattern.startsWith('/')) return `${name} must be relative to the source root (no leading '/'), got '${shown}': ${allowed}`;
  if (pattern.startsWith('!')) return `${name} must not start with '!', got '${shown}': leave files out with exclude instead of a negated include`;
  if (pattern.includes('\\')) return `${name} must use '/' between folders (a '\\' escapes the next character in a glob), got '${shown}'`;
  if (pattern.split('/').some((segment) => segment === '.' || segment === '..')) {
    return `${name} must not contain '.' or '..' folders (keys never do), got '${shown}': ${allowed}`;
  }
  const unbalanced = unbalancedBracket(pattern);
  if (unbalanced) return `${name} is not a valid glob, got '${shown}': ${unbalanced}`;
  return undefined;
}

/**
 * A bracket left open or closed without opening, as picomatch's `strictBrackets` refuses it (the
 * engine compiles with it): `[` without `]`, `{` without `}`, `(` without `)`, or `]`, `)` alone.
 * Inside `[…]` every character is literal; a `]` right after `[` is one too.
 * Checked here, without picomatch, so that the contract stays free of packages.
 */
function unbalancedBracket(pattern: string): string | undefined {
  const open: string[] = [];
  let classStart = -1;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (classStart >= 0) {
      if (char === ']' && i > classStart + 1) classStart = -1;
    } else if (char === '[') {
      classStart = i;
    } else if (char === '{' || char === '(') {
      open.push(char);
    } else if (char === '}' && open[open.length - 1] === '{') {
      open.pop();
    } else if (char === ')' || char === ']') {
      if (char === ')' && open[open.length - 1] === '(') open.pop();
      else return `'${char}' closes nothing (write [${char}] for the character itself)`;
    }
  }
  if (classStart >= 0) return "'[' is not closed by ']'";
  const last = open.pop();
  return last === undefined ? undefined : `'${last}' is not closed by '${last === '{' ? '}' : ')'}'`;
}

/** Every problem of `patterns`, each naming `<name>[i]` (or `name` for a single pattern). */
export function filePatternsProblems(name: string, patterns: readonly string[] | undefined): string[] {
  return (patterns ?? []).flatMap((pattern, i) => filePatternProblem(patterns!.length === 1 ? name : `${name}[${i}]`, pattern) ?? []);
}

/** Whether any pattern is given. */
export function filtersFiles(patterns: FilePatterns): boolean {
  return (patterns.include?.length ?? 0) > 0 || (patterns.exclude?.length ?? 0) > 0;
}
