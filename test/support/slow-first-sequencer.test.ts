import * as fs from 'node:fs';
import * as path from 'node:path';
import { temporaryFolders } from './local-files';

/** The sequencer jest.config.js names: a plain CommonJS module, as jest loads it. */
interface SuiteOrder {
  sort(tests: FakeTest[]): FakeTest[];
  cacheResults(tests: FakeTest[], results: unknown): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const SlowFirstSequencer: { new(): SuiteOrder; SLOWEST_SUITES: string[] } = require('./slow-first-sequencer');

const ROOT = path.resolve(__dirname, '..', '..');
const folder = temporaryFolders();

/** What jest's sequencer reads of a suite: its path, and its project's root, cache and file sizes. */
interface FakeTest {
  readonly path: string;
  readonly context: { readonly config: object; readonly hasteFS: { getSize(file: string): number } };
  duration?: number;
}

/** Suites of one project whose jest cache is `cacheDirectory`; each file's size is its position in `files` (the last the largest). */
function suites(files: string[], cacheDirectory: string): FakeTest[] {
  const context = {
    config: { rootDir: ROOT, cacheDirectory, cache: true, id: 'slow-first', haste: {} },
    hasteFS: { getSize: (file: string) => files.map((name) => path.join(ROOT, name)).indexOf(file) },
  };
  return files.map((file) => ({ path: path.join(ROOT, file), context }));
}

function names(tests: FakeTest[]): string[] {
  return tests.map((test) => path.relative(ROOT, test.path));
}

describe('the suites\' order (test/support/slow-first-sequencer.js)', () => {
  test('every suite it names as slowest exists', () => {
    const missing = SlowFirstSequencer.SLOWEST_SUITES.filter((file) => !fs.existsSync(path.join(ROOT, file)));
    expect(missing).toEqual([]);
  });

  test('without timings (a fresh clone), the slowest suites go first, in their order, then the rest, largest file first', () => {
    // GIVEN
    const [slowest, secondSlowest] = SlowFirstSequencer.SLOWEST_SUITES;
    const tests = suites(['test/a.test.ts', secondSlowest, slowest, 'test/b.test.ts'], folder('jest-cache'));
    // WHEN
    const order = names(new SlowFirstSequencer().sort(tests));
    // THEN
    expect(order).toEqual([slowest, secondSlowest, 'test/b.test.ts', 'test/a.test.ts']);
  });

  test('with timings of an earlier run, jest\'s order: longest first', () => {
    // GIVEN
    const [slowest] = SlowFirstSequencer.SLOWEST_SUITES;
    const cache = folder('jest-cache');
    const files = [slowest, 'test/a.test.ts', 'test/b.test.ts'];
    const seconds = [1, 30, 2];
    const earlier = new SlowFirstSequencer();
    earlier.cacheResults(suites(files, cache), {
      testResults: files.map((file, i) => ({
        testFilePath: path.join(ROOT, file), skipped: false, numFailingTests: 0, perfStats: { runtime: seconds[i] * 1000 },
      })),
    });
    // WHEN
    const order = names(new SlowFirstSequencer().sort(suites(files, cache)));
    // THEN
    expect(order).toEqual(['test/a.test.ts', 'test/b.test.ts', slowest]);
  });
});
