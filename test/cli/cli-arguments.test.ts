import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { seededBytes, temporaryFolders, writeFiles } from '../support/local-files';
import { runCli } from '../support/run-cli';

const folder = temporaryFolders();
const DIAGNOSIS_FIXTURES = path.join(__dirname, '..', 'fixtures', 'diagnosis');

function sourceFolder(): string {
  const dir = folder('src');
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < 6; i++) files[`${i % 2 === 0 ? 'cat' : 'dog'}/${i}.jpg`] = seededBytes(`arguments/${i}`, 300 + 17 * i);
  writeFiles(dir, files);
  return dir;
}

describe('training-io pack: arguments that would write somewhere unexpected exit 2 and write nothing', () => {
  let source: string;
  let cwd: string;
  let before: string[];
  beforeAll(() => {
    source = sourceFolder();
    // A folder of its own as the working folder: a misread output would land here.
    cwd = folder('cwd');
  });
  let previousCwd: string;
  beforeEach(() => {
    previousCwd = process.cwd();
    process.chdir(cwd);
    before = fs.readdirSync(cwd);
  });
  afterEach(() => process.chdir(previousCwd));

  test.each<[string, () => string[], RegExp]>([
    ['an empty output (the working folder)', () => ['pack', source, ''], /^training-io: output is empty: give a folder, a file:\/\/ URL or an s3:\/\/bucket\/prefix\/ URI/],
    ['an empty source', () => ['pack', '', 'out'], /^training-io: source is empty/],
    ['an https:// output (a folder named https:)', () => ['pack', source, 'https://example.com/datasets/cats'],
      /^training-io: output 'https:\/\/example\.com\/datasets\/cats' is a https:\/\/ URL: give a folder, a file:\/\/ URL or an s3:\/\/bucket\/prefix\/ URI/],
    ['a gs:// source', () => ['pack', 'gs://bucket/cats/', 'out'], /^training-io: source 'gs:\/\/bucket\/cats\/' is a gs:\/\/ URL/],
    ['a file:// URL of another host', () => ['pack', source, 'file://fileserver/datasets/cats'], /^training-io: output 'file:\/\/fileserver\/datasets\/cats' is not a local file:\/\/ URL/],
    ['a negative --shards', () => ['pack', source, 'out', '--shards', '-3'], /^training-io: --shards must be a whole number ≥ 1, got '-3'/],
    ['a negative --seed', () => ['pack', source, 'out', '--seed', '-1'], /^training-io: --seed must be a whole number ≥ 0, got '-1'/],
  ])('%s', async (_what, argv, message) => {
    // WHEN
    const { code, stdout, stderr } = await runCli(...argv());

    // THEN
    expect(code).toBe(2);
    expect(stderr.split('\n')).toEqual([expect.stringMatching(message), "Run 'training-io pack --help' for the usage.", '']);
    expect(stdout).toBe('');
    expect(fs.readdirSync(cwd)).toEqual(before);
  });

});

describe('training-io pack: file:// URLs', () => {
  test('file:// URLs are folders: the pack and its verify work through them', async () => {
    // GIVEN
    const source = sourceFolder();
    const output = path.join(folder('out'), 'dataset');

    // WHEN
    const packed = await runCli('pack', '--content', 'any', pathToFileURL(source).href, pathToFileURL(output).href, '--shards', '3', '--consumers', '3');
    const verified = await runCli('verify', pathToFileURL(output).href);

    // THEN
    expect(packed.code).toBe(0);
    expect(packed.stdout).toMatch(/^shards {5}3 \(/m);
    expect(verified.code).toBe(0);
    expect(fs.existsSync(path.join(output, 'manifest.json'))).toBe(true);
  });
});

describe('training-io plan: inputs that would print Infinity exit 2', () => {
  const base = ['plan', '--objects', '1000', '--bytes', '1GB', '--instance', 'ml.p3.2xlarge'];

  test.each<[string[], RegExp]>([
    [['--samples-per-second', '1e308', '--records', '1'], /--samples-per-second must be a number greater than 0 and at most 1000000, got '1e308'/],
    [['--samples-per-second', '-5'], /--samples-per-second must be a number greater than 0 and at most 1000000, got '-5'/],
    [['--workers', '-2'], /--workers must be a whole number between 0 and 1024, got '-2'/],
  ])('%j', async (args, message) => {
    // WHEN
    const { code, stdout, stderr } = await runCli(...base, ...args);

    // THEN
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stdout).not.toMatch(/Infinity|NaN/);
  });

  test.each([['--bytes', '99999999999TB'], ['--mean-size', '0.1B']])('%s %s is refused naming the flag and the range', async (flag, raw) => {
    // WHEN
    const { code, stderr } = await runCli('plan', '--objects', '1000', flag, raw, '--instance', 'ml.p3.2xlarge');

    // THEN
    expect(code).toBe(2);
    expect(stderr).toMatch(new RegExp(`^training-io: ${flag} must be (at most 8PiB|at least 1 byte)`));
  });

  test('the largest rate allowed still plans to finite numbers', async () => {
    // WHEN
    const { code, stdout } = await runCli(...base, '--samples-per-second', '1000000', '--records', '1000');

    // THEN
    expect(code).toBe(0);
    expect(stdout).toMatch(/^read rate .*\/s per instance/m);
    expect(stdout).not.toMatch(/Infinity|NaN/);
  });
});

describe('training-io diagnose --metrics: values a metric cannot take exit 1 naming the file, the metric and the row', () => {
  function withValue(series: 'gpuUtilization' | 'memoryUtilization', value: number): string {
    const set = JSON.parse(fs.readFileSync(path.join(DIAGNOSIS_FIXTURES, 'healthy.json'), 'utf8')) as {
      hosts: Array<Record<string, { values: number[] } | string>>;
      job: { gpusPerInstance: number };
    };
    (set.hosts[0][series] as { values: number[] }).values[2] = value;
    const file = path.join(folder('metrics'), 'metrics.json');
    fs.writeFileSync(file, JSON.stringify(set));
    return file;
  }

  test.each<['gpuUtilization' | 'memoryUtilization', number, RegExp]>([
    ['gpuUtilization', -50, /hosts\[0\]\.gpuUtilization\.values\[2\] must be between 0 and \d+ \(percent.*\), got -50/],
    ['memoryUtilization', 101, /hosts\[0\]\.memoryUtilization\.values\[2\] must be between 0 and 100 \(percent\), got 101/],
  ])('%s of %d', async (series, value, message) => {
    // GIVEN
    const file = withValue(series, value);

    // WHEN
    const { code, stdout, stderr } = await runCli('diagnose', '--metrics', file);

    // THEN
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(new RegExp(`^training-io diagnose: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ${message.source}`));
  });
});
