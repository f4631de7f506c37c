import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Size } from 'aws-cdk-lib';
import { IoPlanner, TrainingInstance } from '../../lib';
import { runCli as run } from '../support/run-cli';

const ISSUE_EXAMPLE = ['plan', '--objects', '2000000', '--bytes', '10GB', '--instance', 'ml.p3dn.24xlarge', '--count', '2'];

describe('training-io plan', () => {
  test('prints the plan as a table of choices with their reasons, and exits 0', async () => {
    // WHEN
    const { code, stdout, stderr } = await run(...ISSUE_EXAMPLE, '--epochs', '90');

    // THEN
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toMatch(/^I\/O plan: 2,000,000 objects, 10\.0 GB \(mean 5\.0 KB, files\) on 2 × ml\.p3dn\.24xlarge \(8 processes each\), 90 epochs, 1 job a month\n/);
    expect(stdout).toMatch(/^mode +start-up +read rate vs needed \(per instance\) +bottleneck +job hours +\$ per job +\$ per month$/m);
    expect(stdout).toMatch(/^ {2}File +~[\d.]+ (min|h) +local vs 46\.2 MB\/s +none \(the GPUs\) +[\d.]+ +\$[\d,.]+ +\$[\d,.]+$/m);
    expect(stdout).toMatch(/^\* FastFile, ShardedByS3Key, packed +under 1 s +[\d.]+ GB\/s vs 46\.2 MB\/s +none \(the GPUs\)/m);
    expect(stdout).toMatch(/^Packing, once: ~[\d.]+ h, \$[\d.]+ \(/m);
    expect(stdout).toMatch(/^Choice: FastFile, ShardedByS3Key, packed: the cheapest that keeps the GPUs fed, \$[\d.]+ per job/m);
    expect(stdout).toMatch(/^input mode {5}FastFile, ShardedByS3Key {2,}FastFile, ShardedByS3Key, packed: the cheapest/m);
    expect(stdout).toMatch(/^packing {8}pack into 176 tfrecord shards of 54\.2 MiB {2,}pack: 2,000,000 files of 5\.0 KB are small files/m);
    expect(stdout).toMatch(/^loaders {8}11 workers, 11 DALI threads per process {2,}\S/m);
    expect(stdout).toMatch(/^pinned memory {2}yes {2,}\S/m);
    expect(stdout).toMatch(/^GPU decoding {3}no {2,}\S/m);
    expect(stdout).toMatch(/^start-up {7}under 1 s \(~40 s unpacked\) {2,}FastFile streams while training runs/m);
    expect(stdout).toMatch(/\nNo warnings: nothing in this plan leaves the GPUs waiting for data\.\n$/);
  });

  test('--json prints the planner\'s plan', async () => {
    // WHEN
    const { code, stdout } = await run(...ISSUE_EXAMPLE, '--epochs', '90', '--json');

    // THEN
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual(JSON.parse(JSON.stringify(IoPlanner.plan({
      dataset: { objectCount: 2_000_000, totalSize: Size.bytes(10e9) },
      cluster: { instance: TrainingInstance.P3DN_24XLARGE, instanceCount: 2 },
      epochs: 90,
    }))));
  });

  test.each([
    ['10GB', 10e9],
    ['10GiB', 10 * 2 ** 30],
    ['2TB', 2e12],
    ['1.5 TiB', 1.5 * 2 ** 40],
    ['140B', 140],
  ])('--bytes %s is %d bytes', async (raw, bytes) => {
    // WHEN
    const { stdout } = await run('plan', '--objects', '1000', '--bytes', raw, '--instance', 'ml.p3dn.24xlarge', '--json');

    // THEN
    expect(JSON.parse(stdout).dataset.totalBytes).toBe(bytes);
  });

  test('--mean-size gives the total from the object count', async () => {
    // WHEN
    const { stdout } = await run('plan', '--objects', '2000000', '--mean-size', '5KB', '--instance', 'ml.p3dn.24xlarge', '--json');

    // THEN
    expect(JSON.parse(stdout).dataset).toMatchObject({ totalBytes: 10e9, meanObjectBytes: 5000 });
  });

  test('2 TB that does not fit the NVMe, read at 800 MB/s per instance: a SCRATCH_2 cache sized for the rate is the cheapest', async () => {
    // WHEN
    const { code, stdout } = await run('plan', '--objects', '20000000', '--bytes', '2TB', '--instance', 'ml.p3dn.24xlarge',
      '--count', '2', '--reused', '--samples-per-second', '1000');

    // THEN
    expect(code).toBe(0);
    expect(stdout).toMatch(/^input mode {6}FSx for Lustre \(File channel\) {2,}FSx SCRATCH_2: the cheapest that keeps the GPUs fed/m);
    expect(stdout).toMatch(/^start-up {8}none {2,}SageMaker mounts the file system/m);
    // 1.6 GB/s at SCRATCH_2's 200 MB/s per TiB: 8,000 GiB, the next legal capacity 9,600 GiB
    expect(stdout).toMatch(/^FSx for Lustre {2}SCRATCH_2, 9,600 GiB, 200 MB\/s\/TiB {2,}SCRATCH_2 \(made for the job/m);
    expect(stdout).toMatch(/^read rate {7}800\.0 MB\/s per instance {2,}8 processes per instance × 1,000 samples\/s × 100\.0 KB per sample: 800\.0 MB\/s per instance, 1\.6 GB\/s for the 2 instances/m);
  });

  test('a streamed plan names the distribution', async () => {
    // WHEN
    const { stdout } = await run('plan', '--objects', '20000000', '--bytes', '2TB', '--instance', 'ml.p3dn.24xlarge', '--count', '2');

    // THEN
    expect(stdout).toMatch(/^input mode {5}FastFile, ShardedByS3Key {2,}FastFile, ShardedByS3Key, packed: the cheapest/m);
    expect(stdout).toMatch(/^ {2}Pipe, ShardedByS3Key, ShuffleConfig, packed +under 1 s +500\.0 MB\/s vs 924\.8 MB\/s \(starved\) +Pipe fan-out/m);
  });

  test('prints the warnings with their codes', async () => {
    // WHEN 100 small files for 176 readers
    const { code, stdout } = await run('plan', '--objects', '100', '--bytes', '100MB', '--instance', 'ml.p3dn.24xlarge', '--count', '2');

    // THEN warnings do not fail the command
    expect(code).toBe(0);
    expect(stdout).toMatch(/\nWarnings:\n {2}moreConsumersThanObjects: 176 consumers .* use at most 100 consumers/);
  });

  test('--json carries every mode\'s row with its dollars, the choice and the packing cost', async () => {
    // WHEN
    const { stdout } = await run('plan', '--objects', '15000000', '--bytes', '2TB', '--instance', 'ml.p4d.24xlarge', '--count', '2',
      '--epochs', '30', '--json');

    // THEN
    const result = JSON.parse(stdout);
    expect(result.modes.map((mode: { label: string }) => mode.label)).toEqual([
      'File', 'FastFile, ShardedByS3Key', 'FSx SCRATCH_2', 'FSx PERSISTENT_2', 'File, packed', 'FastFile, ShardedByS3Key, packed',
      'Pipe, ShardedByS3Key, ShuffleConfig, packed', 'FSx SCRATCH_2, packed', 'FSx PERSISTENT_2, packed',
    ]);
    for (const mode of result.modes) {
      expect(mode).toMatchObject({ startupSeconds: expect.any(Number), jobHours: expect.any(Number), dollarsPerJob: expect.any(Number),
        dollarsPerMonth: expect.any(Number), bottleneck: expect.any(String) });
    }
    expect(result.choice).toMatchObject({ label: 'FastFile, ShardedByS3Key, packed', feedsGpus: true });
    expect(result.packingCost).toMatchObject({ inventoryAdvised: true, dollars: expect.any(Number) });
    expect(result.unavailableModes).toEqual([{ label: 'Pipe', reason: 'Pipe mode streams record shards: the files must be packed first' }]);
  });

  test('--jobs-per-month spreads a PERSISTENT_2 cache over the month\'s jobs', async () => {
    // WHEN
    const fsxDollars = async (jobs: string) => JSON.parse((await run('plan', '--objects', '50000000', '--mean-size', '5KB',
      '--instance', 'ml.g4dn.12xlarge', '--epochs', '10', '--samples-per-second', '1000', '--jobs-per-month', jobs, '--json')).stdout)
      .modes.find((mode: { label: string }) => mode.label === 'FSx PERSISTENT_2').fsxDollars;

    // THEN 1,200 GiB × $0.145 a month
    expect(await fsxDollars('1')).toBeCloseTo(174, 6);
    expect(await fsxDollars('30')).toBeCloseTo(174 / 30, 6);
  });

  test('--prices reads overrides from a JSON file, and they change the choice', async () => {
    // GIVEN
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plan-prices-'));
    const file = path.join(dir, 'prices.json');
    fs.writeFileSync(file, JSON.stringify({ fsxScratch2DollarsPerGbMonth: 0.001 }));

    // WHEN
    const { code, stdout } = await run('plan', '--objects', '15000000', '--bytes', '2TB', '--instance', 'ml.p4d.24xlarge', '--count', '2',
      '--epochs', '30', '--prices', file);

    // THEN
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Choice: FSx SCRATCH_2: the cheapest that keeps the GPUs fed/m);
  });

  test.each<[string, string, RegExp]>([
    ['not JSON', '{', /--prices: '.*prices\.json' is not JSON/],
    ['not an object', '[1]', /--prices: '.*prices\.json' must hold a JSON object/],
    ['an unknown field', '{"s3GetDollarPer1000": 1}', /--prices: '.*' has an unknown field 's3GetDollarPer1000'.*did you mean 's3GetDollarsPer1000'\?$/],
    ['a negative price', '{"s3GetDollarsPer1000": -1}', /\[InvalidPrice\] prices\.s3GetDollarsPer1000 must be a finite number of US dollars, 0 or more, got -1/],
  ])('a --prices file with %s is refused, named, and exits 2', async (_, text, message) => {
    // GIVEN
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plan-prices-'));
    const file = path.join(dir, 'prices.json');
    fs.writeFileSync(file, text);

    // WHEN
    const { code, stderr } = await run('plan', '--objects', '10', '--bytes', '10GB', '--instance', 'ml.g5.2xlarge', '--prices', file);

    // THEN
    expect(code).toBe(2);
    expect(stderr.split('\n')[0]).toMatch(message);
  });

  test('--help prints the usage and exits 0', async () => {
    // WHEN
    const { code, stdout } = await run('plan', '--help');

    // THEN
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: training-io plan --objects N \(--bytes SIZE \| --mean-size SIZE\) --instance TYPE/);
    expect(stdout).toMatch(/--reused/);
    expect(stdout).toMatch(/--json/);
  });

  test.each([
    [['--bytes', '10GB', '--instance', 'ml.p3dn.24xlarge'], /--objects is required/],
    [['--objects', '10', '--bytes', '10GB'], /--instance is required/],
    [['--objects', '10', '--instance', 'ml.p3dn.24xlarge'], /give --bytes \(the total size\) or --mean-size/],
    [['--objects', '10', '--bytes', '1GB', '--mean-size', '1MB', '--instance', 'ml.p3dn.24xlarge'], /give --bytes .* one of them/],
    [['--objects', '0', '--bytes', '10GB', '--instance', 'ml.p3dn.24xlarge'], /--objects must be a whole number ≥ 1, got '0'/],
    [['--objects=-5', '--bytes', '10GB', '--instance', 'ml.p3dn.24xlarge'], /--objects must be a whole number ≥ 1, got '-5'/],
    [['--objects', '10', '--bytes', '0GB', '--instance', 'ml.p3dn.24xlarge'], /--bytes must be at least 1 byte, got '0GB'/],
    [['--objects', '10', '--bytes', '10 parsecs', '--instance', 'ml.p3dn.24xlarge'], /--bytes must be a size such as 64MiB, 100MB or 1048576 \(bytes\), got '10 parsecs'/],
    [['--objects', '10', '--bytes', '10GB', '--instance', 'ml.bogus.xlarge'], /--instance must be a catalogued SageMaker training instance type .* got 'ml\.bogus\.xlarge'/],
    [['--objects', '10', '--bytes', '10GB', '--instance', 'ml.p4dd.24xlarge'], /got 'ml\.p4dd\.24xlarge': did you mean 'ml\.p4d\.24xlarge'\?$/],
    [['--objects', '10', '--bytes', '140', '--instance', 'ml.p3dn.24xlarge'], /^training-io: --bytes needs a unit, got '140': write 140GB or 140GiB \(or 140B for bytes\)$/],
    [['--objects', '10', '--mean-size', '5', '--instance', 'ml.p3dn.24xlarge'], /--mean-size needs a unit, got '5': write 5GB or 5GiB/],
    [['--objects', '10', '--bytes', '10GB', '--instance', 'ml.p3dn.24xlarge', '--count', '0'], /--count must be a whole number between 1 and 10000, got '0'/],
    [['--objects', '10', '--bytes', '10GB', '--instance', 'ml.p3dn.24xlarge', '--epochs', '0'], /--epochs must be a whole number ≥ 1, got '0'/],
    [['--objects', '10', '--bytes', '10GB', '--instance', 'ml.p3dn.24xlarge', '--format', 'parquet'], /--format must be one of files, tfrecord, recordio, got 'parquet'/],
    [['--objects', '10', '--bytes', '10GB', '--instance', 'ml.p3dn.24xlarge', '--samples-per-second', 'fast'], /--samples-per-second must be a number greater than 0 and at most 1000000, got 'fast'/],
    [['--objects', '10', '--bytes', '10GB', '--instance', 'ml.g5.2xlarge', '--processes', '9'], /\[InvalidProcessesPerInstance\] processesPerInstance must be an integer between 1 and the 8 vCPUs of ml\.g5\.2xlarge, got 9/],
    [['--objects', '10', '--bytes', '10GB', '--instance', 'ml.g5.2xlarge', '--format', 'tfrecord', '--samples-per-second', '100'], /\[RecordCountRequired\]/],
    [['--objects', '10', '--bytes', '10GB', '--instance', 'ml.g5.2xlarge', '--jobs-per-month', '0'], /--jobs-per-month must be a whole number between 1 and 1000000, got '0'/],
    [['--objects', '10', '--bytes', '10GB', '--instance', 'ml.g5.2xlarge', '--max-dollars', '0'], /--max-dollars must be a number greater than 0/],
    [['--objects', '10', '--bytes', '10GB', '--instance', 'ml.g5.2xlarge', '--prices', '/nonexistent/prices.json'], /--prices: cannot read '\/nonexistent\/prices\.json'/],
    [['--objects', '10', '--bytes', '10GB', '--instance', 'ml.g5.2xlarge', '--bogus'], /unknown option '--bogus'$/],
    [['--objects', '10', '--bytes', '10GB', '--instance', 'ml.g5.2xlarge', '--epoch', '3'], /unknown option '--epoch': did you mean '--epochs'\?$/],
  ])('bad input %j is named with what is allowed in one line, then where the plan usage is, and exits 2', async (argv, message) => {
    // WHEN
    const { code, stdout, stderr } = await run('plan', ...argv);

    // THEN
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.split('\n')).toEqual([expect.stringMatching(message), "Run 'training-io plan --help' for the usage.", '']);
  });
});
