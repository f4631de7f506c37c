import * as fs from 'fs';
import * as path from 'path';

/** The repository root. */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** A fenced code block of a Markdown page. */
export interface CodeBlock {
  /** The page, relative to the repository root. */
  readonly page: string;
  /** The line of the page (1-based) that holds the block's first line of code. */
  readonly line: number;
  /** The info string's first word: `ts`, `python`, `sh`, ... (empty when none). */
  readonly language: string;
  /** The info string's other words, e.g. `fragment`. */
  readonly flags: readonly string[];
  readonly code: string;
}

/** A relative link of a Markdown page: a file, a heading of a file, or both. */
export interface RelativeLink {
  readonly page: string;
  readonly line: number;
  readonly target: string;
}

/** The user-facing pages: README.md and every page under docs/, relative to the repository root. */
export function userPages(): string[] {
  const docs = fs.readdirSync(path.join(REPO_ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort();
  return ['README.md', ...docs.map((name) => `docs/${name}`)];
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*(.*)$/;

/** The page's lines, each marked as inside a fenced code block or not. */
function linesWithFences(text: string): { readonly text: string; readonly fenced: boolean }[] {
  let open: string | undefined;
  return text.split('\n').map((line) => {
    const fence = FENCE.exec(line);
    if (fence && (open === undefined || (fence[1].startsWith(open) && fence[2] === ''))) {
      open = open === undefined ? fence[1] : undefined;
      return { text: line, fenced: true };
    }
    return { text: line, fenced: open !== undefined };
  });
}

/** Every fenced code block of a page's text. */
export function codeBlocks(page: string, text: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const fence = FENCE.exec(lines[i]);
    if (!fence) continue;
    const end = lines.findIndex((line, j) => j > i && line.trim() === fence[1]);
    if (end < 0) throw new Error(`${page}:${i + 1}: a code block that is never closed`);
    const [language = '', ...flags] = fence[2].trim().split(/\s+/).filter((word) => word !== '');
    blocks.push({ page, line: i + 2, language, flags, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** What GitHub renders as text: fenced blocks and HTML comments blanked (lines kept, for line numbers), inline code spans removed. */
function prose(text: string): string[] {
  return linesWithFences(text)
    .map(({ text: line, fenced }) => (fenced ? '' : line.replace(/(`+)[^`]*?\1/g, '')))
    .join('\n').replace(/<!--[\s\S]*?-->/g, (comment) => comment.replace(/[^\n]/g, ''))
    .split('\n');
}

/** Every link of a page that is not to a web address: `[text](target)` outside code. */
export function relativeLinks(page: string, text: string): RelativeLink[] {
  return prose(text).flatMap((line, i) => [...line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1])
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => ({ page, line: i + 1, target })));
}

/** A heading's anchor as GitHub makes it from the heading's text (github-slugger), before de-duplication. */
export function githubSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text
    .replace(/<[^>]+>/g, '') // HTML tags
    .replace(/[`*]/g, ''); // code and emphasis marks
  return rendered.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors GitHub gives a page's headings: repeated slugs get `-1`, `-2`, ... in order. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: line, fenced } of linesWithFences(text)) {
    const heading = fenced ? null : /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = githubSlug(heading[1]);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/**
 * Why a relative link of `page` does not resolve, or undefined when it does: the file must exist in
 * the repository, and an `#anchor` must be a heading of the Markdown file it points into.
 */
export function brokenLink(link: RelativeLink, readPage: (file: string) => string | undefined): string | undefined {
  const anchor = link.target.split('#', 2)[1];
  const resolved = linkedFile(link);
  if (resolved.startsWith('../')) return `${link.target} leaves the repository`;
  const text = readPage(resolved);
  if (text === undefined) return `${link.target}: there is no ${resolved}`;
  if (anchor === undefined) return undefined;
  if (!resolved.endsWith('.md')) return `${link.target}: an anchor into ${resolved}, which is not a Markdown page`;
  return headingAnchors(text).has(anchor) ? undefined : `${link.target}: ${resolved} has no heading #${anchor}`;
}

/** The file (or folder) a relative link points to, relative to the root of its page: the page itself for `#anchor`. */
export function linkedFile(link: RelativeLink): string {
  const file = link.target.split('#', 2)[0];
  return file === '' ? link.page : path.posix.normalize(path.posix.join(path.posix.dirname(link.page), decodeURI(file)));
}

/** Reads the files under `root` as `brokenLink` asks: a page's text, '' for any other file or a folder, undefined when absent. */
export function pathReader(root: string): (file: string) => string | undefined {
  return (file) => {
    const absolute = path.join(root, file);
    if (!fs.existsSync(absolute)) return undefined;
    return file.endsWith('.md') && fs.statSync(absolute).isFile() ? fs.readFileSync(absolute, 'utf8') : '';
  };
}

/** A file or folder of the repository: a page's text, '' for any other file or a folder, undefined when absent. */
export const readRepositoryPath = pathReader(REPO_ROOT);
