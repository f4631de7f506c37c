/**
 * What a test file starts and must stop (the S3 server, a fixture's proxy and clients): stopped after
 * all of the file's tests, also where the hook that started it gave up first. On a busy runner a
 * `beforeAll` that starts Swift and uploads a dataset can pass jest's 60 s: jest then runs the file's
 * `afterAll`, which finds nothing to stop yet (`fixture?.stop()`), and the start finishes a moment later,
 * leaving a listening proxy and the upload's sockets open in jest's worker ("A worker process has failed
 * to exit gracefully and has been force exited"). Registered when a test file loads this module; idle
 * where jest's globals are absent (global setup).
 */

/** Anything started that can be stopped; stopping twice must be harmless. */
export interface Stoppable {
  stop(): Promise<void>;
}

const started = new Set<Promise<Stoppable | undefined>>();

/** `start`, whose result {@link stopStarted} stops after the test file's last test, whether or not its starter waited for it. */
export function stopAfterAll<T extends Stoppable>(start: Promise<T>): Promise<T> {
  started.add(start.then((value) => value, () => undefined));
  return start;
}

/** Waits for every start this file made and stops what each gave (again, where the file stopped it already). */
export async function stopStarted(): Promise<void> {
  const pending = [...started];
  started.clear();
  for (const start of pending) await (await start)?.stop();
}

// Read off globalThis, not as jest's global: the build (tsconfig.json, without jest's types) compiles
// this file too, for the benches that start the S3 server.
const jestAfterAll = (globalThis as { afterAll?: (hook: () => Promise<void>, timeout: number) => void }).afterAll;
if (typeof jestAfterAll === 'function') {
  // Long enough for a start still under way (the S3 server waits 30 s for its "ready") and its stop.
  jestAfterAll(stopStarted, 120_000);
}
