import { spawn } from 'node:child_process';
import * as path from 'node:path';

const REPO = path.join(__dirname, '..', '..');

/** Runs bin/training-io.ts (through ts-node) with its stdout's reader gone before it writes: every write fails with EPIPE. */
function runWithClosedStdout(...args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', require.resolve('ts-node/register/transpile-only'), path.join(REPO, 'bin', 'training-io.ts'), ...args], {
      cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TS_NODE_PROJECT: path.join(REPO, 'tsconfig.dev.json') },
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('training-io with a reader that leaves early (| head)', () => {
  test.each([['instances'], ['--help'], ['pack', '--help']])('`training-io %s` ends quietly, with the status of SIGPIPE', async (...args) => {
    // WHEN
    const { code, stderr } = await runWithClosedStdout(...args);

    // THEN
    expect(stderr).toBe('');
    expect(code).toBe(141);
  }, 60_000);
});
