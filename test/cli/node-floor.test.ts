import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { floorOf, nodeFloorProblem } from '../../bin/cli/node-floor';

const REPO = path.resolve(__dirname, '..', '..');
const FLOOR = floorOf(JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')).engines.node)!;

/** A Node.js older than the floor on this machine (Debian's 20), if there is one. */
const OLD_NODE = ['/usr/bin/node', '/bin/node', '/usr/local/bin/node'].find((candidate) => {
  const run = fs.existsSync(candidate) ? spawnSync(candidate, ['--version'], { encoding: 'utf8' }) : undefined;
  return run?.status === 0 && Number(/^v(\d+)/.exec(run.stdout)?.[1]) < FLOOR;
});

/** bin/training-io.ts run as a shell runs the command, by `node`, through ts-node (the sources, not a build). */
function trainingIo(node: string, ...args: string[]) {
  return spawnSync(node, ['-r', require.resolve('ts-node/register/transpile-only'), path.join(REPO, 'bin', 'training-io.ts'), ...args], {
    cwd: REPO, encoding: 'utf8', timeout: 120_000, env: { ...process.env, TS_NODE_PROJECT: path.join(REPO, 'tsconfig.dev.json') },
  });
}

describe('the Node.js floor of the command line', () => {
  test('package.json sets the floor at 22', () => {
    expect(FLOOR).toBe(22);
  });

  test.each([['20.20.2', true], ['21.7.3', true], ['22.0.0', false], ['24.1.0', false]])('Node.js %s is refused: %s', (version, refused) => {
    expect(nodeFloorProblem(version, 22) !== undefined).toBe(refused);
  });

  test('the message names the version, the floor and how to get it', () => {
    expect(nodeFloorProblem('20.20.2', 22)).toBe('Node.js 20.20.2 is older than 22, the oldest this package runs on: install Node.js 22 '
      + '(nvm install 22, or in a clone of the repository: export PATH="$(node scripts/node-binary.mjs --floor):$PATH")');
  });

  test.each(['', '^22', '>=22 <25', undefined])('an engines range of another form (%p) sets no floor', (engines) => {
    expect(floorOf(engines)).toBeUndefined();
  });

  // Where the machine has no older Node.js there is nothing to run it on: the two tests above check the rule.
  (OLD_NODE ? test : test.skip)(`on an older Node.js (${OLD_NODE ?? 'none on this machine'}), training-io refuses in one line and exits 1 before any command runs`, () => {
    // WHEN
    const run = trainingIo(OLD_NODE!, 'instances');

    // THEN
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^training-io: Node\.js 20\.\d+\.\d+ is older than 22, .*nvm install 22.*node scripts\/node-binary\.mjs --floor.*\n$/);
    expect(run.stderr.split('\n')).toHaveLength(2);
  });

  test('on this Node.js (the floor or later), training-io runs', () => {
    const run = trainingIo(process.execPath, '--version');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe(JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')).version);
  });
});
