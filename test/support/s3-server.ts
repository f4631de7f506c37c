import type { ChildProcess} from 'node:child_process';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { S3ServerKind} from './s3-server-kind';
import { stopAfterAll } from './left-running';
import { chooseS3Server, DEBIAN_PYTHON, SWIFT_INSTALL_HINT } from './s3-server-kind';

/** A server script beside this file; from dist/test/support/ (a compiled bench), the one in the source tree. */
function serverScript(name: string): string {
  return [__dirname, path.join(__dirname, '..', '..', '..', 'test', 'support')]
    .map((dir) => path.join(dir, 's3-server', name))
    .find((file) => fs.existsSync(file)) ?? path.join(__dirname, 's3-server', name);
}

/** How each server is started, and the S3 credentials it accepts. */
const SERVERS: Record<S3ServerKind, { command: () => [string, string[]]; credentials: S3TestServer['credentials'] }> = {
  swift: {
    command: () => [DEBIAN_PYTHON, ['-E', '-s', serverScript('swift_s3_server.py')]],
    credentials: { accessKeyId: 'test:tester', secretAccessKey: 'testing' },
  },
  s3rver: {
    command: () => [process.execPath, ['--openssl-legacy-provider', serverScript('s3rver-server.js')]],
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  },
};

/**
 * A running S3-protocol server on 127.0.0.1: OpenStack Swift with its S3 API, or s3rver where
 * python3-swift cannot be had (see test/support/s3-server-kind.ts and s3-server/).
 */
export interface S3TestServer {
  /** Which server: the checks s3rver cannot honour are not made there (test/support/s3-server-capabilities.ts). */
  readonly kind: S3ServerKind;
  /** Its name and version, e.g. `OpenStack Swift 2.30.1 (python3-swift)`. */
  readonly name: string;
  /** `http://127.0.0.1:<port>`: stays the same across `kill()` and `restart()`. */
  readonly endpoint: string;
  readonly port: number;
  readonly region: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** Kills the server at once (SIGKILL, as a crash would), keeping its data. */
  kill(): Promise<void>;
  /** Starts the server again on the same data and port (after `kill()`). */
  restart(): Promise<void>;
  /** Kills the server and removes its data. */
  stop(): Promise<void>;
}

/**
 * Starts the server `chooseS3Server` picks in a process of its own, on a free loopback port, with
 * its data in a fresh temporary folder. Swift: its proxy (s3api + tempauth), account, container and
 * object servers in one Python process. Throws, naming the fix, when Swift was asked for and cannot be had.
 * Stopped after the test file's tests, also where the hook that started it timed out (./left-running.ts).
 */
export function startS3Server(): Promise<S3TestServer> {
  return stopAfterAll(startServer());
}

async function startServer(): Promise<S3TestServer> {
  const { kind, name } = await chooseS3Server();
  const dir = fs.mkdtempSync(path.join(xattrCapableTemp(), 'cdk-training-io-s3-'));
  let child: ChildProcess | undefined;
  let port = 0;
  const killGroup = () => {
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  };
  process.once('exit', killGroup);
  const kill = async () => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    // Unreferenced once ready: referenced again so that the wait for its exit keeps Node running.
    running.ref();
    killGroup();
    await exited;
  };
  const launch = async () => {
    const started = await launchServer(kind, dir, port);
    child = started.child;
    port = started.port;
  };
  try {
    await launch();
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    process.removeListener('exit', killGroup);
    throw error;
  }
  return {
    kind,
    name,
    endpoint: `http://127.0.0.1:${port}`,
    port,
    region: 'us-east-1',
    credentials: SERVERS[kind].credentials,
    kill,
    restart: async () => {
      await kill();
      await launch();
    },
    stop: async () => {
      await kill();
      process.removeListener('exit', killGroup);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * An S3 client for the test server (or for a fault proxy in front of it, given its endpoint): path
 * style, and checksums only where required (Swift answers 501 to the SDK's `aws-chunked` bodies,
 * s3rver stores their framing as the object's bytes).
 * `maxAttempts` defaults to 1 so that the storage classes' own retries are what the tests see.
 */
export function s3TestClient(server: Pick<S3TestServer, 'endpoint' | 'region' | 'credentials'>,
  options: { endpoint?: string; maxAttempts?: number } = {}): S3Client {
  return new S3Client({
    endpoint: options.endpoint ?? server.endpoint,
    region: server.region,
    credentials: server.credentials,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: options.maxAttempts ?? 1,
  });
}

let bucketCount = 0;

/** Creates a bucket with a name unique to this process and returns the name. */
export async function createTestBucket(client: S3Client, purpose: string): Promise<string> {
  const name = `${purpose}-${process.pid}-${++bucketCount}`.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  await client.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

/** Puts each key → bytes into the bucket, `concurrency` at a time. */
export async function putTestObjects(client: S3Client, bucket: string, objects: Readonly<Record<string, Buffer | string>>,
  concurrency = 16): Promise<void> {
  const entries = Object.entries(objects);
  let next = 0;
  const worker = async () => {
    while (next < entries.length) {
      const [key, data] = entries[next++];
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: typeof data === 'string' ? Buffer.from(data) : data }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, entries.length) }, worker));
}

async function launchServer(kind: S3ServerKind, dir: string, port: number): Promise<{ child: ChildProcess; port: number }> {
  const [command, args] = SERVERS[kind].command();
  // Its own process group, so that killing the group ends every thread and child it has.
  const child = spawn(command, [...args, '--dir', dir, '--port', String(port)], {
    detached: true, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    stderr = (stderr + text).slice(-8000);
  });
  return new Promise((resolve, reject) => {
    let stdout = '';
    const fail = (reason: string) => {
      if (child.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      reject(new Error(/No module named '(swift|eventlet)'/.test(stderr)
        ? `python3-swift is not installed for ${DEBIAN_PYTHON}; ${SWIFT_INSTALL_HINT}`
        : `the test S3 server (${kind}) did not start (${reason}):\n${stderr}`));
    };
    const timer = setTimeout(() => fail('not ready after 30 s'), 30_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      fail(error.message);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      fail(`exited with ${signal ?? code}`);
    });
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      const ready = /^ready (\d+)$/m.exec(stdout);
      if (!ready) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      // Keep draining its output so that it never blocks on a full pipe; do not keep jest alive for it.
      child.unref();
      (child.stdout as unknown as { unref?: () => void }).unref?.();
      (child.stderr as unknown as { unref?: () => void }).unref?.();
      resolve({ child, port: Number(ready[1]) });
    });
  });
}

/**
 * Swift's object server keeps metadata in user extended attributes: tmpfs has them only from Linux 6.6.
 * The system's temporary folder when it supports them, else a cache folder on the home disk.
 */
function xattrCapableTemp(): string {
  const tmp = os.tmpdir();
  const mounts = fs.existsSync('/proc/mounts') ? fs.readFileSync('/proc/mounts', 'utf8') : '';
  const tmpfs = mounts.split('\n').map((line) => line.split(' ')).filter((f) => f[2] === 'tmpfs').map((f) => f[1]);
  const onTmpfs = tmpfs.some((mount) => tmp === mount || tmp.startsWith(`${mount}/`));
  const [major, minor] = os.release().split('.').map(Number);
  if (!onTmpfs || major > 6 || (major === 6 && minor >= 6)) return tmp;
  const fallback = path.join(os.homedir(), '.cache', 'cdk-training-io');
  fs.mkdirSync(fallback, { recursive: true });
  return fallback;
}
