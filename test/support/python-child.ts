import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';

/** The repository root: the Python children run there, with container/ and test/python on their path. */
export const REPO = path.resolve(__dirname, '..', '..');

/** PYTHON if set; else Debian's /usr/bin/python3 where it imports `modules` (what .ci/run installs); else python3 on PATH. */
export function pythonWith(modules: string): string {
  return process.env.PYTHON ?? (spawnSync('/usr/bin/python3', ['-c', `import ${modules}`], { stdio: 'ignore', timeout: 60_000 }).status === 0
    ? '/usr/bin/python3' : 'python3');
}

/**
 * Runs `python args` in the repository with the readers and the Python tests importable, started
 * asynchronously, so that the servers and fault proxies of this jest process answer it meanwhile.
 */
export function runPythonChild(python: string, args: string[], env: Record<string, string>): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, args, {
      cwd: REPO,
      env: { ...process.env, PYTHONPATH: [path.join(REPO, 'container'), path.join(REPO, 'test', 'python')].join(path.delimiter), PYTHONDONTWRITEBYTECODE: '1', ...env },
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => { output += text; });
    child.stderr.setEncoding('utf8').on('data', (text: string) => { output += text; });
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, output }));
  });
}
