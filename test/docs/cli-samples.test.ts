import * as fs from 'fs';
import * as path from 'path';
import type { CodeBlock } from '../support/markdown';
import { codeBlocks, REPO_ROOT, userPages } from '../support/markdown';
import { temporaryFolders } from '../support/local-files';
import { runCli } from '../support/run-cli';

// A sample output in the docs is a code block that starts with the command, `$ npx training-io ...`,
// and goes on with what it prints. Each is run now and compared line by line, numbers included: a
// sample that the command no longer prints fails here, not in a reader's terminal. A line may end in
// ` ...` where the page cuts a long reason short: the command's line then starts with what precedes.
// The sample is what a terminal shows: stdout, then stderr.

const PROMPT = /^\$ (?:npx )?training-io /;
/** What a page writes where it cuts a line short. */
const CUT = ' ...';

/**
 * Commands whose output depends on their arguments alone (no files, clocks or AWS), so a sample can be
 * run as it is. A sample of another command must show an argument error (exit 2: refused before
 * anything is read or written); it runs in an empty folder of its own all the same.
 */
const REPRODUCIBLE = new Set(['plan', 'instances']);
const folder = temporaryFolders();

function samples(): CodeBlock[] {
  return userPages().flatMap((page) => codeBlocks(page, fs.readFileSync(path.join(REPO_ROOT, page), 'utf8')))
    .filter((block) => PROMPT.test(block.code));
}

/** The command's lines as the page would print them: cut where the page cuts, whole elsewhere. */
function asThePageCutsThem(printed: string[], documented: string[]): string[] {
  return printed.map((line, i) => {
    const sample = documented[i];
    if (sample === undefined || !sample.endsWith(CUT)) return line.trimEnd();
    const kept = sample.slice(0, -CUT.length);
    return line.startsWith(kept) ? sample : line.trimEnd();
  });
}

describe('the docs\' sample outputs are what the commands print now', () => {
  const blocks = samples();

  test('docs/cli.md has samples (the test would pass vacuously without them)', () => {
    expect(blocks.filter((block) => block.page === 'docs/cli.md').length).toBeGreaterThan(0);
  });

  test.each(blocks.map((block) => [`${block.page}:${block.line}`, block] as const))('%s', async (_where, block) => {
    // GIVEN
    const [command, ...documented] = block.code.split('\n');
    const args = command.replace(PROMPT, '').trim().split(/\s+/);
    expect(/["'\\]/.test(command) ? 'a sample command without quotes or escapes' : 'ok').toBe('ok');
    const reproducible = REPRODUCIBLE.has(args[0]);

    // WHEN
    const previousCwd = process.cwd();
    process.chdir(folder('sample'));
    const { code, stdout, stderr } = await runCli(...args).finally(() => process.chdir(previousCwd));

    // THEN
    expect(code).toBe(reproducible ? 0 : 2);
    const printed = `${stdout}${stderr}`.replace(/\n$/, '').split('\n');
    expect(documented.map((line) => line.trimEnd())).toEqual(asThePageCutsThem(printed, documented));
  });
});
