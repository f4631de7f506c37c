import * as fs from 'node:fs';
import * as path from 'node:path';
import { Size } from 'aws-cdk-lib';
import type { IoPlan, IoPlanProps, ModeEstimate } from '../../lib';
import { IoPlanner, PlannedInputMode, S3DataDistribution, TrainingInstance } from '../../lib';
import {
  CLOUDWATCH_DASHBOARD_MONTH, FSX_PERSISTENT_2_GB_MONTH, HOURS_PER_MONTH, INSTANCE_HOURLY, INTERFACE_ENDPOINT_AZ_HOUR, KMS_KEY_MONTH,
  S3_STANDARD_GB_MONTH,
} from '../../lib/contract/prices';

// Every figure below is computed by hand from the named rates (lib/planning/private/mode-rates.ts,
// startup-rules.ts) and the price table, written out so that a change of either shows here.
const CONNECTION = 85e6; // S3 bytes/s per connection
const FILE_CONNECTIONS = 8; // File mode's parallel downloads
const OBJECTS_PER_SECOND = 8 / 0.02; // 8 requests of 20 ms at once
const FANOUT = 0.5e9; // this library's Pipe fan-out on one host

function plan(objects: number, bytes: number, instance: TrainingInstance, count: number, extra: Partial<IoPlanProps> = {}): IoPlan {
  return IoPlanner.plan({ dataset: { objectCount: objects, totalSize: Size.bytes(bytes) }, cluster: { instance, instanceCount: count }, ...extra });
}

function row(result: IoPlan, label: string): ModeEstimate {
  const found = result.modes.find((mode) => mode.label === label);
  if (!found) throw new Error(`no row '${label}' in ${result.modes.map((mode) => mode.label).join(' | ')}`);
  return found;
}

describe('the plan prices every mode', () => {
  test('10 GB in 10,000 files on one ml.g5.2xlarge at 500 samples/s: File, whose figures follow by hand', () => {
    // WHEN
    const result = plan(10_000, 10e9, TrainingInstance.G5_2XLARGE, 1, { epochs: 10, samplesPerSecondPerDevice: 500 });

    // THEN the download at the 5 Gbit/s network (625 MB/s, below 8 × 85 MB/s), then 10,000 GETs at 400/s
    const file = row(result, 'File');
    const startup = 10e9 / Math.min(5e9 / 8, FILE_CONNECTIONS * CONNECTION) + 10_000 / OBJECTS_PER_SECOND;
    expect(file.startupSeconds).toBeCloseTo(41, 6);
    expect(file.startupSeconds).toBeCloseTo(startup, 6);
    // 1 process × 500 samples/s × 1 MB
    expect(file.neededBytesPerSecondPerInstance).toBeCloseTo(500e6);
    expect(file.feedsGpus).toBe(true);
    expect(file.trainingSeconds).toBeCloseTo(10 * 10e9 / 500e6, 6);
    expect(file.jobHours).toBeCloseTo(241 / 3600, 9);
    expect(file.instanceDollars).toBeCloseTo(1.515 * 241 / 3600, 9);
    expect(file.requestDollars).toBeCloseTo(10_000 / 1000 * 0.0004 + 10 / 1000 * 0.005, 9);
    expect(result.choice.label).toBe('File');
    expect(result.inputMode.mode).toBe(PlannedInputMode.FILE);
    // FastFile as the files are: 7 loader workers each read a 1 MB file in 20 ms + 1 MB / 85 MB/s
    const fastFile = row(result, 'FastFile');
    expect(fastFile.readBytesPerSecondPerInstance).toBeCloseTo(7 * 1e6 / (0.02 + 1e6 / CONNECTION), 3);
    expect(fastFile.feedsGpus).toBe(false);
  });

  test('the same 140 GB starts sooner in File mode on ml.p4d.24xlarge than on ml.g5.2xlarge: each instance\'s own network', () => {
    // WHEN
    const p4d = row(plan(140_000, 140e9, TrainingInstance.P4D_24XLARGE, 1), 'File');
    const g5 = row(plan(140_000, 140e9, TrainingInstance.G5_2XLARGE, 1), 'File');

    // THEN 680 MB/s of S3 connections on the 400 Gbit/s p4d, 625 MB/s of network on the g5
    expect(p4d.startupSeconds).toBeCloseTo(140e9 / (FILE_CONNECTIONS * CONNECTION) + 140_000 / OBJECTS_PER_SECOND, 6);
    expect(g5.startupSeconds).toBeCloseTo(140e9 / (5e9 / 8) + 140_000 / OBJECTS_PER_SECOND, 6);
    expect(p4d.startupSeconds).toBeLessThan(g5.startupSeconds);
  });

  test('ImageNet on 2 × ml.p4d.24xlarge: Pipe does not feed 8 A100s, the host\'s fan-out is the bottleneck', () => {
    // WHEN
    const result = plan(1_281_167, 140e9, TrainingInstance.P4D_24XLARGE, 2, { epochs: 90 });

    // THEN 8 processes × 2,470 samples/s (the A100's figure) × 109 KB per sample
    const pipe = row(result, 'Pipe, ShardedByS3Key, ShuffleConfig, packed');
    const need = 8 * 2470 * (140e9 / 1_281_167);
    expect(pipe.neededBytesPerSecondPerInstance).toBeCloseTo(need, 0);
    expect(pipe.readBytesPerSecondPerInstance).toBe(FANOUT);
    expect(pipe.bottleneck).toBe('Pipe fan-out');
    expect(pipe.feedsGpus).toBe(false);
    expect(pipe.trainingSeconds).toBeCloseTo(90 * 70e9 / FANOUT, 3);
    expect(pipe.starvedSeconds).toBeCloseTo(90 * 70e9 / FANOUT - 90 * 70e9 / need, 3);
    expect(result.choice.feedsGpus).toBe(true);
    expect(result.choice.label).not.toMatch(/^Pipe/);
  });

  test('2 TB in 15,000,000 files on 2 × ml.p4d.24xlarge for 30 epochs: not File, whose 11.2 h download is priced', () => {
    // WHEN
    const result = plan(15_000_000, 2e12, TrainingInstance.P4D_24XLARGE, 2, { epochs: 30 });

    // THEN each instance downloads 2 TB at 680 MB/s and 15,000,000 GETs at 400/s
    const file = row(result, 'File');
    const startup = 2e12 / (FILE_CONNECTIONS * CONNECTION) + 15e6 / OBJECTS_PER_SECOND;
    expect(file.startupSeconds).toBeCloseTo(startup, 3);
    expect(file.startupSeconds / 3600).toBeCloseTo(11.23, 2);
    // 2 × $37.688 an hour over the download and the 30 epochs at the A100s' rate
    const need = 8 * 2470 * (2e12 / 15e6);
    const training = 30 * 1e12 / need;
    expect(file.instanceDollars).toBeCloseTo(2 * 37.688 * (startup + training) / 3600, 6);
    expect(result.choice.label).toBe('FastFile, ShardedByS3Key, packed');
    expect(result.inputMode.mode).toBe(PlannedInputMode.FAST_FILE);
    expect(result.inputMode.distribution).toBe(S3DataDistribution.SHARDED_BY_S3_KEY);
    expect(result.packing.pack).toBe(true);
    expect(result.choice.dollarsPerJob).toBeLessThan(file.dollarsPerJob / 4);
    expect(result.choice.reason).toMatch(/the cheapest that keeps the GPUs fed, \$[\d.]+ per job/);
    expect(result.choice.savingsPerMonth).toBeGreaterThan(0);
  });

  test('50,000,000 × 5 KB on ml.g4dn.12xlarge: packing\'s hours and dollars, with the S3 Inventory advice', () => {
    // WHEN
    const result = plan(50_000_000, 50_000_000 * 5e3, TrainingInstance.G4DN_12XLARGE, 1, { epochs: 10, samplesPerSecondPerDevice: 1000 });

    // THEN 50,000,000 GETs at $0.0004 per 1,000; 50,000 list pages of 75 ms
    const packing = result.packingCost!;
    expect(packing.requestDollars).toBeGreaterThanOrEqual(20);
    expect(packing.seconds).toBeGreaterThan(50_000 * 0.075);
    expect(packing.inventoryAdvised).toBe(true);
    expect(packing.reason).toMatch(/sourceInventory/);
    // FastFile as they are: 4 processes × 11 workers, each a 5 KB object per 20 ms + 5 KB / 85 MB/s
    const fastFile = row(result, 'FastFile');
    expect(fastFile.readBytesPerSecondPerInstance).toBeCloseTo(44 * 5e3 / (0.02 + 5e3 / CONNECTION), 3);
    expect(fastFile.bottleneck).toBe('S3 requests');
    expect(fastFile.feedsGpus).toBe(false);
    expect(result.choice.label).toMatch(/packed$/);
  });

  test('FSx PERSISTENT_2 beats SCRATCH_2 once enough jobs a month share its first epoch from S3', () => {
    // GIVEN 50,000,000 small files: a file system's first epoch loads them from S3 at the request rate
    const at = (jobsPerMonth: number) => plan(50_000_000, 50_000_000 * 5e3, TrainingInstance.G4DN_12XLARGE, 1,
      { epochs: 10, samplesPerSecondPerDevice: 1000, jobsPerMonth });

    // WHEN
    const one = at(1);
    const thirty = at(30);

    // THEN a scratch file system pays the cold epoch every job; a persistent one, 1,200 GiB at $0.145, once a month
    expect(row(one, 'FSx SCRATCH_2').dollarsPerJob).toBeLessThan(row(one, 'FSx PERSISTENT_2').dollarsPerJob);
    expect(row(thirty, 'FSx PERSISTENT_2').dollarsPerJob).toBeLessThan(row(thirty, 'FSx SCRATCH_2').dollarsPerJob);
    expect(row(thirty, 'FSx PERSISTENT_2').fsxDollars).toBeCloseTo(1200 * 0.145 / 30, 9);
    expect(row(thirty, 'FSx SCRATCH_2').dollarsPerJob).toBeCloseTo(row(one, 'FSx SCRATCH_2').dollarsPerJob, 9);
  });

  test('a price override changes the choice: cheap FSx scratch storage wins the 2 TB job', () => {
    // WHEN
    const result = plan(15_000_000, 2e12, TrainingInstance.P4D_24XLARGE, 2, { epochs: 30, prices: { fsxScratch2DollarsPerGbMonth: 0.001 } });

    // THEN (FastFile, packed without the override)
    expect(result.choice.label).toBe('FSx SCRATCH_2');
    expect(result.inputMode.mode).toBe(PlannedInputMode.FSX_LUSTRE);
    expect(result.fsx?.deploymentType).toBe('SCRATCH_2');
  });

  test('an instance price override counts: the job\'s instance dollars follow it', () => {
    // WHEN
    const result = plan(10_000, 10e9, TrainingInstance.G5_2XLARGE, 1, {
      epochs: 10, samplesPerSecondPerDevice: 500, prices: { instances: [{ instanceType: 'ml.g5.2xlarge', dollarsPerHour: 3.03 }] },
    });

    // THEN twice the table's $1.515
    expect(row(result, 'File').instanceDollars).toBeCloseTo(3.03 * 241 / 3600, 9);
  });

  test.each<[string, Partial<IoPlanProps>, RegExp]>([
    ['a negative price', { prices: { s3GetDollarsPer1000: -1 } }, /InvalidPrice.*prices.s3GetDollarsPer1000 must be a finite number of US dollars, 0 or more, got -1/],
    ['a tier FSx does not offer', { prices: { fsxPersistent2: [{ perUnitStorageThroughput: 300, dollarsPerGbMonth: 1 }] } },
      /InvalidPrice.*perUnitStorageThroughput must be one of 125, 250, 500, 1000 MB\/s\/TiB, got 300/],
    ['0 jobs a month', { jobsPerMonth: 0 }, /InvalidJobsPerMonth.*jobsPerMonth must be a whole number of at least 1, got 0/],
    ['a dollar limit of 0', { maxDollarsPerJob: 0 }, /InvalidMaxDollars.*got 0/],
  ])('refuses %s', (_, extra, message) => {
    expect(() => plan(10_000, 10e9, TrainingInstance.G5_2XLARGE, 1, extra)).toThrow(message);
  });

  test('warns when the cheapest job costs more than the dollars set', () => {
    // WHEN
    const result = plan(15_000_000, 2e12, TrainingInstance.P4D_24XLARGE, 2, { epochs: 30, maxDollarsPerJob: 100 });

    // THEN
    expect(result.warnings.find((w) => w.code === 'aboveMaxDollars')?.message).toMatch(/costs \$[\d.]+ per job, more than the \$100.00 set/);
  });

  test('warns with the idle device-hours and dollars when no mode feeds the GPUs', () => {
    // GIVEN 500 GB (more than the NVMe holds) of 1 MB samples at 100,000 samples/s: 100 GB/s, over the 5 Gbit/s network
    const result = plan(500, 500e9, TrainingInstance.G5_2XLARGE, 1, {
      dataset: { objectCount: 500, totalSize: Size.bytes(500e9), recordCount: 500_000 }, samplesPerSecondPerDevice: 100_000,
    });

    // THEN
    const warning = result.warnings.find((w) => w.code === 'gpusStarved');
    expect(warning?.message).toMatch(/idle device-hours, \$[\d.]+ per job/);
    expect(result.choice.feedsGpus).toBe(false);
  });

  test('the read-rate sentence multiplies out: processes per instance × samples/s × bytes per sample = the rate per instance', () => {
    // WHEN
    const result = plan(1_280_000, 1.5e12, TrainingInstance.G5_2XLARGE, 4, { epochs: 5, samplesPerSecondPerDevice: 1000 });

    // THEN
    const match = /^(\d+) process(?:es)? per instance × ([\d,]+) samples\/s × ([\d.]+) MB per sample: ([\d.]+) (GB|MB)\/s per instance/
      .exec(result.readRate!.reason)!;
    const [processes, samples, megabytes, rate, unit] = [Number(match[1]), Number(match[2].replace(/,/g, '')), Number(match[3]), Number(match[4]), match[5]];
    expect(processes * samples * megabytes * 1e6).toBeCloseTo(rate * (unit === 'GB' ? 1e9 : 1e6), -7);
    expect(result.readRate!.bytesPerSecondPerInstance).toBeCloseTo(1 * 1000 * 1.5e12 / 1_280_000, 3);
  });
});

describe('the price table', () => {
  test('prices every catalogued instance type', () => {
    const missing = TrainingInstance.all().map((instance) => instance.instanceType).filter((type) => INSTANCE_HOURLY[type] === undefined);
    expect(missing).toEqual([]);
  });

  test('says how every estimate was derived', () => {
    const unexplained = Object.entries(INSTANCE_HOURLY).filter(([, figure]) => figure.basis === 'estimate' && !figure.derivation);
    expect(unexplained).toEqual([]);
  });

  test('the README\'s scenario prices are the table\'s', () => {
    // GIVEN
    const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
    const money = (dollars: number, digits = 2) => `$${dollars.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })}`;
    const fsxMonth = 2400 * FSX_PERSISTENT_2_GB_MONTH[1000].dollars;
    const endpoints = 6 * INTERFACE_ENDPOINT_AZ_HOUR.dollars * HOURS_PER_MONTH;

    // THEN
    expect(readme).toContain(`${money(S3_STANDARD_GB_MONTH.dollars, 3)} per GB-month`);
    expect(readme).toContain(`2,400 × ${money(FSX_PERSISTENT_2_GB_MONTH[1000].dollars, 3)} per GB-month`);
    expect(readme).toContain(`**${money(fsxMonth, 0)}**`);
    expect(readme).toContain(`endpoints ${money(endpoints)} (6 × ${money(INTERFACE_ENDPOINT_AZ_HOUR.dollars)} an hour)`);
    expect(readme).toContain(`dashboard ${money(CLOUDWATCH_DASHBOARD_MONTH.dollars, 0)}`);
    expect(readme).toContain(`key ${money(KMS_KEY_MONTH.dollars, 0)}`);
    expect(readme).toContain(`**${money(fsxMonth + CLOUDWATCH_DASHBOARD_MONTH.dollars, 0)}**`);
    expect(readme).toContain(`**${money(fsxMonth + endpoints + CLOUDWATCH_DASHBOARD_MONTH.dollars + KMS_KEY_MONTH.dollars, 0)}**`);
  });
});
