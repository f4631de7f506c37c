import * as fs from 'fs';
import * as path from 'path';
import type { Verdict } from '../../lambda/diagnosis/diagnosis';
import { diagnoseJob } from '../../lambda/diagnosis/diagnose-job';
import { quantile } from '../../lambda/diagnosis/series';
import type { JobMetricSet} from '../../lambda/diagnosis/metric-set';
import { parseMetricSet } from '../../lambda/diagnosis/metric-set';
import { renderMarkdown } from '../../lambda/diagnosis/render-report';
import { THRESHOLDS } from '../../lib/contract/diagnosis-thresholds';
import type { SyntheticJob } from '../support/metric-sets';
import { syntheticMetricSet } from '../support/metric-sets';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'diagnosis');

function recorded(name: string): JobMetricSet {
  const file = path.join(FIXTURES, `${name}.json`);
  return parseMetricSet(JSON.parse(fs.readFileSync(file, 'utf8')), file);
}

/** Levels held exactly (no noise) through the training phase; `dataWait: null` for code that reports none. */
interface SteadyLevels {
  readonly gpu: number;
  readonly cpu?: number;
  readonly gpuMemory?: number;
  readonly dataWait?: number | null;
}

/** A job whose training phase holds these levels exactly, with a data-wait metric unless told otherwise. */
function steady(job: Omit<Partial<SyntheticJob>, keyof SteadyLevels> & SteadyLevels): JobMetricSet {
  const { gpu, cpu, gpuMemory, dataWait, ...rest } = job;
  return syntheticMetricSet({
    ...rest,
    gpu: { mean: gpu },
    cpu: { mean: cpu ?? 30 },
    gpuMemory: { mean: gpuMemory ?? 85 },
    memory: { mean: 40 },
    disk: { mean: 20 },
    ...(dataWait === null ? {} : { dataWait: { mean: dataWait ?? 0.3 } }),
  });
}

function verdictOf(set: JobMetricSet): Verdict {
  return diagnoseJob(set).verdict;
}

describe('job diagnosis: recorded metric sets', () => {
  test.each<[string, Verdict, RegExp]>([
    ['long-download', 'long-download', /shards \(ShardedDataset\)[\s\S]*LustreDatasetCache[\s\S]*FAST_FILE/],
    ['preprocessing-bound', 'preprocessing-bound', /NVIDIA DALI[\s\S]*Resize at pack time \(imagePreprocessing \/ training-io pack --resize\)[\s\S]*CPU\/GPU ratio/],
    ['input-bound', 'input-bound', /from 2 to 11[\s\S]*equal shards[\s\S]*Resize at pack time \(imagePreprocessing \/ training-io pack --resize\)[\s\S]*cache had room/],
    ['gpu-memory-headroom', 'gpu-memory-headroom', /Raise the batch size/],
    ['healthy', 'healthy', /Nothing to change/],
  ])('%s is classified %s with the advice for it', (fixture, verdict, advice) => {
    // GIVEN
    const set = recorded(fixture);
    // WHEN
    const diagnosis = diagnoseJob(set);
    // THEN
    expect(diagnosis.verdict).toBe(verdict);
    expect(diagnosis.findings[0].verdict).toBe(verdict);
    expect(diagnosis.findings[0].advice.join('\n')).toMatch(advice);
  });

  test('the long download is the verdict, while the GPUs were busy once training started', () => {
    const diagnosis = diagnoseJob(recorded('long-download'));
    expect(diagnosis.findings.map((f) => f.verdict)).toEqual(['long-download', 'healthy']);
    expect(diagnosis.findings[0].summary).toMatch(/spent 28m 00s downloading/);
    expect(diagnosis.phases.map((p) => p.status)).toEqual(['Starting', 'Downloading', 'Training', 'Uploading', 'Completed']);
  });

  test('utilization is normalised per GPU and per vCPU from the summed CloudWatch values', () => {
    // GIVEN: 8 GPUs and 64 vCPUs per instance, GPUUtilization up to 800 and CPUUtilization up to 6400
    const set = recorded('preprocessing-bound');
    expect(Math.max(...set.hosts[0].cpuUtilization!.values)).toBeGreaterThan(100 * 60);
    // WHEN
    const { utilization } = diagnoseJob(set);
    // THEN
    expect(utilization!.gpuP95).toBeLessThan(70);
    expect(utilization!.cpuP95).toBeGreaterThan(90);
    expect(utilization!.cpuP95).toBeLessThanOrEqual(100);
    expect(utilization!.cpuBoundShare).toBe(1);
  });

  test('the FSx cache\'s read throughput is compared with its baseline', () => {
    const { cache } = diagnoseJob(recorded('input-bound'));
    expect(cache).toMatchObject({ fileSystemId: 'fs-0123456789abcdef0', baselineMBps: 2400 });
    expect(cache!.readMBpsMean).toBeGreaterThan(800);
    expect(cache!.busyShare).toBeCloseTo(cache!.readMBpsMean / 2400, 2);
  });

  test('the report renders as Markdown with the verdict, advice, evidence, timeline, hosts and thresholds with sources', () => {
    const markdown = renderMarkdown(diagnoseJob(recorded('input-bound')));
    expect(markdown).toMatch(/^# Training job resnet50-fsx-.*: Input-bound \(I\/O or too few loader workers\)\n/);
    expect(markdown).toContain('**What to change**');
    expect(markdown).toContain('| Training | 50m 00s |');
    expect(markdown).toMatch(/\| resnet50-fsx-.*\/algo-2 \| 42 \|/);
    expect(markdown).toContain('| gpuLowPercent | 70 | SageMaker Debugger LowGPUUtilization threshold_p95 |');
    expect(markdown).toContain('## FSx for Lustre cache');
  });

  test.each(['input-bound', 'healthy'] as const)('the %s report says its verdict and its summary once', (kind) => {
    // GIVEN
    const diagnosis = diagnoseJob(recorded(kind));
    // WHEN
    const markdown = renderMarkdown(diagnosis);
    // THEN
    const title = /^# Training job \S+: (.*)$/m.exec(markdown)![1];
    expect(markdown.split(title)).toHaveLength(2);
    expect(markdown.split(diagnosis.summary)).toHaveLength(2);
  });

  test('the diagnosis is plain JSON: it survives a round trip unchanged', () => {
    const diagnosis = diagnoseJob(recorded('healthy'));
    expect(JSON.parse(JSON.stringify(diagnosis))).toEqual(diagnosis);
  });
});

describe('job diagnosis: rule boundaries', () => {
  test.each<[number, Verdict]>([
    [THRESHOLDS.gpuLowPercent, 'healthy'],
    [THRESHOLDS.gpuLowPercent - 0.1, 'input-bound'],
  ])('GPU at %p %% per GPU is %s', (gpu, verdict) => {
    expect(verdictOf(steady({ gpu }))).toBe(verdict);
  });

  test.each<[number, Verdict]>([
    [THRESHOLDS.cpuHighPercent, 'preprocessing-bound'],
    [THRESHOLDS.cpuHighPercent - 0.1, 'input-bound'],
  ])('with the GPU low, CPU at %p %% is %s', (cpu, verdict) => {
    expect(verdictOf(steady({ gpu: 50, cpu }))).toBe(verdict);
  });

  test('CPU saturation in exactly half of the samples is not a bottleneck; in more than half it is', () => {
    // 40 training minutes: 32 samples per host after the warm-up, every other one at 95 % CPU.
    const half = syntheticMetricSet({ gpu: { mean: 50 }, cpu: { mean: 50, alternate: 95 }, dataWait: { mean: 0.3 } });
    expect(diagnoseJob(half).utilization!.cpuBoundShare).toBe(THRESHOLDS.bottleneckShare);
    expect(verdictOf(half)).toBe('input-bound');
    // 41 minutes: 33 samples per host, 17 of them (the odd minutes 9…41) at 95 %.
    const most = syntheticMetricSet({ gpu: { mean: 50 }, cpu: { mean: 50, alternate: 95 }, trainingMinutes: 41, dataWait: { mean: 0.3 } });
    expect(diagnoseJob(most).utilization!.cpuBoundShare).toBeGreaterThan(THRESHOLDS.bottleneckShare);
    expect(verdictOf(most)).toBe('preprocessing-bound');
  });

  test.each<[number, Verdict]>([
    [THRESHOLDS.dataWaitShare, 'input-bound'],
    [THRESHOLDS.dataWaitShare - 0.001, 'gpu-memory-headroom'],
  ])('with GPU, CPU and GPU memory low, a data wait of %p is %s', (dataWait, verdict) => {
    expect(verdictOf(steady({ gpu: 50, cpu: 30, gpuMemory: 40, dataWait }))).toBe(verdict);
  });

  test.each<[number, number, Verdict]>([
    [THRESHOLDS.gpuMemoryHeadroomPercent - 0.1, 30, 'gpu-memory-headroom'],
    [THRESHOLDS.gpuMemoryHeadroomPercent, 30, 'step-bound'],
    [40, THRESHOLDS.batchSizeCpuPercent - 0.1, 'gpu-memory-headroom'],
    [40, THRESHOLDS.batchSizeCpuPercent, 'step-bound'],
  ])('with the loop not waiting for data, GPU memory %p %% and CPU %p %% are %s', (gpuMemory, cpu, verdict) => {
    expect(verdictOf(steady({ gpu: 50, cpu, gpuMemory, dataWait: 0.02 }))).toBe(verdict);
  });

  test('without a data-wait metric, low GPU with idle CPUs is input-bound, with a batch-size note when GPU memory is free', () => {
    const diagnosis = diagnoseJob(steady({ gpu: 50, cpu: 30, gpuMemory: 40, dataWait: null }));
    expect(diagnosis.findings.map((f) => f.verdict)).toEqual(['input-bound', 'gpu-memory-headroom']);
    expect(diagnosis.findings[1].summary).toMatch(/Fix the input first/);
    expect(diagnosis.findings[0].evidence).toContain('The training code reports no data-wait metric');
  });

  test.each<[number, number, boolean]>([
    [THRESHOLDS.longDownloadSeconds / 60, 200, true],
    [THRESHOLDS.longDownloadSeconds / 60 - 0.1, 200, false],
    [10, 40, true],
    [9.9, 40, false],
  ])('%p minutes downloading before %p minutes of training is a long download: %p', (downloadMinutes, trainingMinutes, long) => {
    const findings = diagnoseJob(steady({ gpu: 90, downloadMinutes, trainingMinutes })).findings.map((f) => f.verdict);
    expect(findings.includes('long-download')).toBe(long);
  });

  test.each<[number, Verdict]>([
    [3, 'insufficient-data'],
    [4, 'healthy'],
  ])('%p minutes of training (one sample a minute, both ends) is %s', (trainingMinutes, verdict) => {
    expect(verdictOf(steady({ gpu: 90, trainingMinutes, downloadMinutes: 0, instanceCount: 1 }))).toBe(verdict);
  });

  test('the warm-up at the start of training is left out, so loading the model does not count as a CPU bottleneck', () => {
    // GIVEN: 8 minutes (under 500 s) of GPU 0 % with CPU 95 % while the model loads, then GPU 50 %, CPU 40 %
    const set = syntheticMetricSet({
      gpu: { mean: 50 }, cpu: { mean: 40 }, dataWait: { mean: 0.3 }, trainingMinutes: 14, warmup: { minutes: 8, gpu: 0, cpu: 95 },
    });
    // WHEN
    const diagnosis = diagnoseJob(set);
    // THEN: 15 samples per host in training, 6 after the warm-up
    expect(diagnosis.utilization).toMatchObject({ samples: 2 * 6, cpuBoundShare: 0 });
    expect(diagnosis.verdict).toBe('input-bound');
  });

  test('a training phase too short for its warm-up is judged on all its samples', () => {
    const set = syntheticMetricSet({ gpu: { mean: 50 }, cpu: { mean: 40 }, trainingMinutes: 10, warmup: { minutes: 8, gpu: 0, cpu: 95 } });
    expect(diagnoseJob(set).utilization!.samples).toBe(2 * 11);
  });

  test('the same per-GPU load gives the same verdict on one GPU as on eight', () => {
    const one = steady({ gpu: 50, cpu: 95, gpus: 1, vcpus: 8 });
    const eight = steady({ gpu: 50, cpu: 95, gpus: 8, vcpus: 96 });
    expect(verdictOf(one)).toBe('preprocessing-bound');
    expect(verdictOf(eight)).toBe('preprocessing-bound');
    expect(diagnoseJob(one).utilization!.gpuP95).toBe(diagnoseJob(eight).utilization!.gpuP95);
  });

  test('an instance without GPUs cannot be judged', () => {
    const diagnosis = diagnoseJob(steady({ gpu: 0, gpus: 0, vcpus: 96 }));
    expect(diagnosis.verdict).toBe('insufficient-data');
    expect(diagnosis.summary).toMatch(/has no GPUs/);
  });

  test('idle GPU time counts every GPU of every host: the finding that wasted most is the verdict', () => {
    // 2 hosts × 8 GPUs at 40 %, 32 samples each after the warm-up, one minute each
    const inputBound = diagnoseJob(steady({ gpu: 40, downloadMinutes: 2 }));
    expect(inputBound.findings[0].idleGpuSeconds).toBe(2 * 32 * 0.6 * 60 * 8);
    // 30 minutes of download on 16 GPUs outweighs 40 minutes at 40 %
    const both = diagnoseJob(steady({ gpu: 40, downloadMinutes: 60 }));
    expect(both.findings.map((f) => f.verdict)).toEqual(['long-download', 'input-bound']);
  });

  test('a busy FSx cache is named as the limit; one with room sends the user to the loader', () => {
    const busy = diagnoseJob(syntheticMetricSet({
      gpu: { mean: 50 }, cpu: { mean: 30 }, dataWait: { mean: 0.4 }, cache: { baselineMBps: 1000, readMBps: { mean: THRESHOLDS.cacheBusyShare * 1000 } },
    }));
    expect(busy.findings[0].advice[0]).toMatch(/FSx for Lustre cache .* raise its throughput/);
    const idle = diagnoseJob(syntheticMetricSet({
      gpu: { mean: 50 }, cpu: { mean: 30 }, dataWait: { mean: 0.4 }, cache: { baselineMBps: 1000, readMBps: { mean: 790 } },
    }));
    expect(idle.findings[0].advice.join('\n')).toMatch(/cache had room \(79 % of its baseline\)/);
  });

  test('quantiles interpolate between ranks as NumPy does', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([10, 0, 20, 30, 40], 0.95)).toBe(38);
    expect(quantile([7], 0.95)).toBe(7);
  });
});

describe('job diagnosis: jobs that did not complete', () => {
  /** A job that ran `steady` levels, then ended as told; `change` edits each host's series (in place) before it does. */
  function ended(status: 'Failed' | 'Stopped', failureReason: string | undefined,
    change: (values: { gpu: number[]; memory: number[] }, trainingMinutes: number) => void = () => undefined): JobMetricSet {
    const set = steady({ gpu: 90, cpu: 40, trainingMinutes: 40 });
    for (const host of set.hosts) change({ gpu: host.gpuUtilization!.values, memory: host.memoryUtilization!.values }, 40);
    return { ...set, job: { ...set.job, status, ...(failureReason ? { failureReason } : {}) } };
  }

  test('a failed job leads with its FailureReason, whatever the utilization said', () => {
    // GIVEN a job whose GPUs were busy: healthy, had it completed
    const set = ended('Failed', 'AlgorithmError: ExecuteUserScriptError: exit code 1');

    // WHEN
    const diagnosis = diagnoseJob(set);

    // THEN
    expect(diagnosis.verdict).toBe('job-failed');
    expect(diagnosis.summary).toBe('The job failed: AlgorithmError: ExecuteUserScriptError: exit code 1.');
    expect(diagnosis.findings.map((f) => f.verdict)).toEqual(['job-failed', 'healthy']);
    expect(diagnosis.findings[0].evidence).toContain('The GPUs were busy (70 % or more) until the end');
    expect(renderMarkdown(diagnosis)).toMatch(/^# Training job .*: Failed$/m);
  });

  test('memory at its limit before the end points at the out-of-memory killer and the loader workers', () => {
    // GIVEN host memory at 99 % in the last three minutes on every host: the first host at the peak is named
    const set = ended('Failed', 'AlgorithmError: worker killed by signal: Killed', ({ memory }) => memory.fill(99, memory.length - 3));

    // WHEN
    const [finding] = diagnoseJob(set).findings;

    // THEN
    expect(finding.evidence).toContain('Host memory reached 99 % on algo-1 in the last 5m 00s before the end');
    expect(finding.advice[0]).toMatch(/ran out of memory.*Lower `num_workers`/);
  });

  test.each([
    [THRESHOLDS.memoryLimitPercent, true],
    [THRESHOLDS.memoryLimitPercent - 0.1, false],
  ])('memory at %s %% is at the limit: %s', (percent, atLimit) => {
    // GIVEN
    const set = ended('Failed', 'AlgorithmError', ({ memory }) => memory.fill(percent, memory.length - 1));

    // WHEN
    const advice = diagnoseJob(set).findings[0].advice.join('\n');

    // THEN
    expect(/ran out of memory/.test(advice)).toBe(atLimit);
  });

  test('GPUs that went idle before a failure give the minute they did and send the user to the loader\'s logs', () => {
    // GIVEN GPUs at 0 % from the 31st minute of training on every host (the metrics run to the end of training)
    const set = ended('Failed', 'AlgorithmError: DataLoader worker (pid 812) exited unexpectedly', ({ gpu }) => gpu.fill(0, gpu.length - 10));

    // WHEN
    const [finding] = diagnoseJob(set).findings;

    // THEN
    expect(finding.evidence).toContain('The GPUs ran below 70 % from minute 31 of training, 10m 00s before the end');
    expect(finding.evidence).toContain('The loop waited for data 30 % of the time before the end');
    expect(finding.advice.join('\n')).toMatch(/data loader that died or hung/);
  });

  test('a stopped job says how jobs stop and that checkpoints let a new one resume', () => {
    // GIVEN
    const set = ended('Stopped', undefined);

    // WHEN
    const diagnosis = diagnoseJob(set);

    // THEN
    expect(diagnosis.verdict).toBe('job-stopped');
    expect(diagnosis.summary).toBe('The job was stopped: no reason given.');
    expect(diagnosis.findings[0].advice.join('\n')).toMatch(/MaxRuntimeInSeconds[\s\S]*CheckpointConfig/);
  });

  test('a completed job has no ending finding', () => {
    expect(diagnoseJob(steady({ gpu: 90 })).findings.map((f) => f.verdict)).toEqual(['healthy']);
  });
});

describe('job metric set documents', () => {
  test.each<[unknown, RegExp]>([
    [[], /metrics\.json: the document must be a JSON object, got \[\]/],
    [{ format: 'other' }, /metrics\.json: format must be 'cdk-training-io\/job-metrics@1', got "other"/],
    [{ ...recorded('healthy'), periodSeconds: 0 }, /periodSeconds must be a number greater than 0, got 0/],
    [{ ...recorded('healthy'), job: { ...recorded('healthy').job, gpusPerInstance: 'eight' } }, /job\.gpusPerInstance must be a whole number of at least 0, got "eight"/],
    [{ ...recorded('healthy'), hosts: [{ host: 'x/algo-1', gpuUtilization: { timestamps: ['2026-11-02T09:00:00Z'], values: [] } }] },
      /hosts\[0\]\.gpuUtilization has 1 timestamps but 0 values/],
    [{ ...recorded('healthy'), hosts: [{ host: 'x/algo-1', cpuUtilization: { timestamps: ['yesterday'], values: [1] } }] },
      /hosts\[0\]\.cpuUtilization\.timestamps\[0\] must be an ISO 8601 timestamp, got "yesterday"/],
  ])('a bad document is refused naming the field: %#', (document, message) => {
    expect(() => parseMetricSet(document, 'metrics.json')).toThrow(message);
  });
});
