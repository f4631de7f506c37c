import * as fs from 'fs';
import * as path from 'path';
import { codeBlocks, REPO_ROOT } from '../support/markdown';
import { runCli } from '../support/run-cli';

// docs/cli.md summarizes every command's options in one usage block; each command's own `--help`
// is the reference. This keeps the two naming the same options.

const PAGE = 'docs/cli.md';
const COMMANDS = ['pack', 'verify', 'instances', 'plan', 'diagnose', 'launch'];

/** The options each command's lines of the usage block name (a command may have several lines, e.g. `diagnose --metrics`). */
function documentedOptions(): Map<string, Set<string>> {
  const usage = codeBlocks(PAGE, fs.readFileSync(path.join(REPO_ROOT, PAGE), 'utf8'))
    .find((block) => block.code.startsWith('training-io <command> [options]'));
  if (!usage) throw new Error(`${PAGE} has no usage block starting "training-io <command> [options]"`);
  const options = new Map<string, Set<string>>();
  let command: string | undefined;
  for (const line of usage.code.split('\n').slice(1)) {
    command = /^ {2}([a-z]+)\b/.exec(line)?.[1] ?? command;
    if (command === undefined) continue;
    const named = options.get(command) ?? new Set<string>();
    for (const option of line.match(/--[a-z][a-z-]*/g) ?? []) named.add(option);
    options.set(command, named);
  }
  return options;
}

/** The options a command's `--help` names. */
async function helpOptions(command: string): Promise<Set<string>> {
  const { code, stdout } = await runCli(command, '--help');
  if (code !== 0) throw new Error(`training-io ${command} --help exited ${code}`);
  return new Set((stdout.match(/--[a-z][a-z-]*/g) ?? []).filter((option) => option !== '--help'));
}

describe(`${PAGE}'s usage block`, () => {
  const documented = documentedOptions();

  test('has a part for every command, and for no other', () => {
    expect([...documented.keys()].sort()).toEqual([...COMMANDS].sort());
  });

  test.each(COMMANDS)('names the options of `training-io %s --help`, and no other', async (command) => {
    // GIVEN
    const help = await helpOptions(command);
    const docs = documented.get(command) ?? new Set<string>();
    // THEN
    expect({ missing: [...help].filter((option) => !docs.has(option)), unknown: [...docs].filter((option) => !help.has(option)) })
      .toEqual({ missing: [], unknown: [] });
  });
});
