import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The variable that picks the test S3 server: `swift`, `s3rver` or `auto` (the default). */
export const S3_SERVER_VARIABLE = 'CDK_TRAINING_IO_S3_SERVER';
/** OpenStack Swift with its S3 API (Debian's python3-swift), or s3rver from npm. */
export type S3ServerKind = 'swift' | 's3rver';
/** Debian's Python: the python3-swift package is installed for it, not for any other python3 on PATH. */
export const DEBIAN_PYTHON = '/usr/bin/python3';
export const SWIFT_INSTALL_HINT = 'run `.ci/run`, or `apt-get install -y --no-install-recommends python3-swift` as root';

/** The server the S3 suites run against, and why that one. */
export interface S3ServerChoice {
  readonly kind: S3ServerKind;
  /** Its name and version, e.g. `OpenStack Swift 2.30.1 (python3-swift)`. */
  readonly name: string;
  /** Why this one, when it is not the one the variable asked for. */
  readonly why?: string;
}

/**
 * Picks the server: s3rver when asked for; else Swift when python3-swift is importable, or can be
 * installed here (root on Debian/Ubuntu with apt-get: installed once, under a lock); else s3rver,
 * unless Swift was asked for, which then fails naming the fix.
 */
export async function chooseS3Server(log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Promise<S3ServerChoice> {
  const asked = askedS3Server();
  if (asked === 's3rver') return { kind: 's3rver', name: s3rverName() };
  let version = swiftVersion();
  let missing = 'python3-swift is not installed';
  if (version === undefined) {
    const blocker = swiftInstallBlocker();
    if (blocker === undefined) {
      try {
        await withInstallLock(async () => {
          // Another run may have installed it while this one waited for the lock.
          if (swiftVersion() === undefined) await installSwift(log);
        });
        missing = `python3-swift is installed, yet ${DEBIAN_PYTHON} cannot import it`;
      } catch (error) {
        missing = `installing python3-swift failed (${(error as Error).message})`;
      }
      version = swiftVersion();
    } else {
      missing += ` and cannot be installed here (${blocker})`;
    }
  }
  if (version !== undefined) return { kind: 'swift', name: `OpenStack Swift ${version} (python3-swift)` };
  if (asked === 'swift') throw new Error(`${S3_SERVER_VARIABLE}=swift, but ${missing}; ${SWIFT_INSTALL_HINT}, or set ${S3_SERVER_VARIABLE}=s3rver`);
  return { kind: 's3rver', name: s3rverName(), why: missing };
}

/**
 * The server of this test run, known when tests are declared: jest's global setup chose it and set
 * the variable; outside jest, Swift when it is installed.
 */
export function currentS3ServerKind(): S3ServerKind {
  const asked = askedS3Server();
  if (asked !== 'auto') return asked;
  return swiftVersion() === undefined ? 's3rver' : 'swift';
}

function askedS3Server(): S3ServerKind | 'auto' {
  const value = process.env[S3_SERVER_VARIABLE] ?? 'auto';
  if (value === 'swift' || value === 's3rver' || value === 'auto') return value;
  throw new Error(`${S3_SERVER_VARIABLE} must be swift, s3rver or auto, got '${value}'`);
}

/** Swift's version when python3-swift (with eventlet and the s3api middleware) is importable by Debian's Python. */
export function swiftVersion(): string | undefined {
  if (!fs.existsSync(DEBIAN_PYTHON)) return undefined;
  const probe = spawnSync(DEBIAN_PYTHON, ['-E', '-s', '-c', 'import eventlet, swift, swift.common.middleware.s3api; print(swift.__version__)'], { encoding: 'utf8' });
  return probe.status === 0 ? probe.stdout.trim() : undefined;
}

export function s3rverName(): string {
  const manifest = JSON.parse(fs.readFileSync(require.resolve('s3rver/package.json'), 'utf8')) as { version: string };
  return `s3rver ${manifest.version} (npm)`;
}

/** Why this machine cannot install python3-swift itself, or undefined when it can. */
function swiftInstallBlocker(): string | undefined {
  if (!fs.existsSync('/etc/debian_version') || !fs.existsSync('/usr/bin/apt-get')) return 'not Debian or Ubuntu with apt-get';
  if (process.getuid?.() !== 0) return 'not root';
  return undefined;
}

async function installSwift(log: (line: string) => void): Promise<void> {
  log(`Installing python3-swift with apt-get for the S3 test server (once; ${S3_SERVER_VARIABLE}=s3rver uses the npm server instead)`);
  const started = Date.now();
  // apt waits for a dpkg lock another installer holds rather than failing at once.
  const lockWait = ['-o', 'DPkg::Lock::Timeout=300'];
  await run('apt-get', [...lockWait, 'update']);
  await run('apt-get', [...lockWait, 'install', '-y', '--no-install-recommends', 'python3-swift']);
  log(`Installed python3-swift in ${Math.round((Date.now() - started) / 1000)} s`);
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    let output = '';
    const keep = (text: Buffer) => {
      output = (output + text.toString('utf8')).slice(-2000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      const last = output.trim().split('\n').pop() ?? '';
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} exited with ${signal ?? code}: ${last}`));
    });
  });
}

/** Runs `use` while holding a machine-wide lock (a folder), so that concurrent test runs install once. */
async function withInstallLock(use: () => Promise<void>): Promise<void> {
  const lock = path.join(os.tmpdir(), 'cdk-training-io-python3-swift.lock');
  const owner = path.join(lock, 'pid');
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(owner, String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (!lockHolderAlive(lock, owner)) fs.rmSync(lock, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    await use();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function lockHolderAlive(lock: string, owner: string): boolean {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(owner, 'utf8'));
  } catch {
    // Its pid not written yet: alive, unless the holder died between the two steps long ago.
    try {
      return Date.now() - fs.statSync(lock).mtimeMs < 10_000;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
