import picomatch from 'picomatch';
import type { FilePatterns } from '../../../lib/contract/file-patterns';
import type { ListedFile, PackingSource, ScratchBuffer } from '../../io/storage';

/**
 * A source whose listing leaves out the files that `patterns` exclude (or do not include), counting
 * them: the files read are those the plan names, so only the listing is filtered.
 */
export class FilteredSource implements PackingSource {
  public readonly uri: string;
  public readonly readInto?: (key: string, listedSize: number, scratch: ScratchBuffer) => Buffer;
  private readonly matches: (key: string) => boolean;
  private excluded = 0;

  constructor(private readonly source: PackingSource, patterns: FilePatterns) {
    this.uri = source.uri;
    this.matches = fileMatcher(patterns);
    if (source.readInto) this.readInto = source.readInto.bind(source);
  }

  /** Files the last listing left out. */
  public get excludedFiles(): number {
    return this.excluded;
  }

  public async *list(): AsyncIterable<ListedFile[]> {
    this.excluded = 0;
    for await (const batch of this.source.list()) {
      const kept = batch.filter((file) => this.matches(file.key));
      this.excluded += batch.length - kept.length;
      if (kept.length > 0) yield kept;
    }
  }

  public read(key: string, listedSize?: number): Promise<Buffer> {
    return this.source.read(key, listedSize);
  }
}

/**
 * picomatch's settings: `*` and `**` match names that start with a dot too (excluding `*.txt` leaves
 * out `.notes.txt` as well), and an unclosed `[` or `{` is an error rather than a literal character
 * (lib/contract/file-patterns.ts refuses those before they get here).
 */
const GLOB_OPTIONS: picomatch.PicomatchOptions = { dot: true, strictBrackets: true };

/** Whether a key is packed: it matches an include (or there is none) and no exclude. */
function fileMatcher(patterns: FilePatterns): (key: string) => boolean {
  const included = patterns.include && patterns.include.length > 0 ? picomatch([...patterns.include], GLOB_OPTIONS) : () => true;
  const excluded = patterns.exclude && patterns.exclude.length > 0 ? picomatch([...patterns.exclude], GLOB_OPTIONS) : () => false;
  return (key) => included(key) && !excluded(key);
}
