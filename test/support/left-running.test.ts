import { startS3Fixture } from './s3-fixture';
import { stopAfterAll, stopStarted } from './left-running';

/** A start that finishes only when told to, as a server's start still under way when its hook timed out. */
function slowStart() {
  const stops: string[] = [];
  let finish!: () => void;
  const start = new Promise<{ stop(): Promise<void> }>((resolve) => {
    finish = () => resolve({ stop: async () => { stops.push('stopped'); } });
  });
  return { start, stops, finish: () => finish() };
}

describe('what a test file starts is stopped after its tests', () => {
  test('a start its starter stopped waiting for is awaited, then stopped; a failed start is passed over', async () => {
    // GIVEN: one start still under way (the hook that made it gave up), one that failed
    const slow = slowStart();
    void stopAfterAll(slow.start);
    stopAfterAll(Promise.reject(new Error('did not start'))).catch(() => undefined);

    // WHEN: the file's tests are over, and the start finishes only now
    const stopping = stopStarted();
    slow.finish();
    await stopping;

    // THEN
    expect(slow.stops).toEqual(['stopped']);
  });

  test('a fixture the file never stops itself (its beforeAll timed out) is stopped: its proxy no longer listens', async () => {
    // GIVEN: a fixture whose starter never kept it
    const fixture = await startS3Fixture();
    const endpoint = fixture.proxy.endpoint;
    await expect(fetch(endpoint)).resolves.toBeDefined();

    // WHEN
    await stopStarted();

    // THEN
    await expect(fetch(endpoint)).rejects.toThrow();
  }, 180_000);
});
