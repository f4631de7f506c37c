import type { ProgressState } from '../../bin/cli/progress';
import { formatDuration, ProgressDisplay } from '../../bin/cli/progress';

/** A stream that keeps what is written to it. */
function stream(isTTY: boolean): { written: string[]; stream: NodeJS.WriteStream } {
  const written: string[] = [];
  const fake = { isTTY, write: (chunk: string) => written.push(chunk) > 0 };
  return { written, stream: fake as unknown as NodeJS.WriteStream };
}

const state = (filesDone: number, bytesDone: number): ProgressState => ({ filesDone, totalFiles: 4, bytesDone, totalBytes: 8e6 });

describe('ProgressDisplay', () => {
  // The clock is frozen and moved by hand: what is drawn depends on elapsed time, never on how fast the test runs.
  beforeEach(() => {
    jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  test('off a terminal it writes plain lines: the first update, then the final state once on finish', () => {
    // GIVEN
    const { written, stream: err } = stream(false);
    const display = new ProgressDisplay(err, 'packing');

    // WHEN
    jest.advanceTimersByTime(1000);
    display.update(state(1, 2e6));
    display.update(state(2, 4e6));
    display.update(state(4, 8e6));
    display.finish();

    // THEN
    expect(written).toEqual([
      'packing  25%  1/4 files  2.0 MB/s  ETA 3.0s\n',
      'packing 100%  4/4 files  8.0 MB/s  ETA 0.0s\n',
    ]);
  });

  test('off a terminal it draws again only after 5 seconds', () => {
    // GIVEN
    const { written, stream: err } = stream(false);
    const display = new ProgressDisplay(err, 'packing');
    display.update(state(1, 1e6));

    // WHEN
    jest.advanceTimersByTime(4999);
    display.update(state(2, 2e6));
    jest.advanceTimersByTime(1);
    display.update(state(3, 3e6));

    // THEN
    expect(written.map((line) => line.match(/\d\/4 files/)![0])).toEqual(['1/4 files', '3/4 files']);
  });

  test('finish without any update writes nothing', () => {
    // GIVEN
    const { written, stream: err } = stream(false);

    // WHEN
    new ProgressDisplay(err, 'packing').finish();

    // THEN
    expect(written).toEqual([]);
  });

  test('on a terminal it redraws one line with a bar and ends it on finish', () => {
    // GIVEN
    const { written, stream: tty } = stream(true);
    const display = new ProgressDisplay(tty, 'packing');

    // WHEN
    jest.advanceTimersByTime(1000);
    display.update(state(1, 2e6));
    display.finish();

    // THEN
    expect(written).toEqual([
      '\rpacking [######..................]  25%  1/4 files  2.0 MB/s  ETA 3.0s\x1b[K',
      '\rpacking [######..................]  25%  1/4 files  2.0 MB/s  ETA 3.0s\x1b[K',
      '\n',
    ]);
  });
});

describe('formatDuration', () => {
  test.each([[5, '5.0s'], [42, '42s'], [125, '2m05s'], [3725, '1h02m'], [-1, '?'], [Infinity, '?']])('%d seconds is %j', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });
});
