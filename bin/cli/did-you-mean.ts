/**
 * The closest of `candidates` to a mistyped `word`, for a "did you mean" hint: undefined when none is
 * close enough to be the one meant (at most 2 edits, and fewer than half the word's letters).
 * Twenty lines of edit distance rather than a dependency: the command line ships in the package, and a
 * runtime dependency would have to be bundled into it.
 */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    // Lengths more than 2 apart are more than 2 edits apart: skipped, a 100,000-character word costs nothing.
    if (Math.abs(word.length - candidate.length) > 2) continue;
    const distance = editDistance(word, candidate);
    if (best === undefined || distance < best.distance) best = { candidate, distance };
  }
  return best !== undefined && best.distance <= 2 && best.distance < word.length / 2 ? best.candidate : undefined;
}

/**
 * The fewest insertions, deletions, substitutions and swaps of two neighbouring letters that turn `a`
 * into `b` (optimal string alignment: Levenshtein plus swaps, the commonest typo: `plna`).
 */
export function editDistance(a: string, b: string): number {
  const rows = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(rows[i - 1][j] + 1, row[j - 1] + 1, rows[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j], rows[i - 2][j - 2] + 1);
    }
    rows.push(row);
  }
  return rows[a.length][b.length];
}

/**
 * The candidates that start with `word`, for a name cut short (`ml.p4d.24xl` → `ml.p4d.24xlarge`),
 * which edit distance misses: at most `limit`, and none for a word of fewer than 3 characters.
 */
export function completions(word: string, candidates: readonly string[], limit = 3): string[] {
  if (word.length < 3) return [];
  return candidates.filter((candidate) => candidate !== word && candidate.startsWith(word)).slice(0, limit);
}

/** `: did you mean 'pack'?` (the closest by edit distance, else the names the word begins), or nothing where none is close. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const match = closestMatch(word, candidates);
  if (match !== undefined) return `: did you mean '${match}'?`;
  const started = completions(word, candidates);
  return started.length === 0 ? '' : `: did you mean ${started.map((candidate) => `'${candidate}'`).join(' or ')}?`;
}
