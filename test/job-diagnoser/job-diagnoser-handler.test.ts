import * as fs from 'fs';
import * as path from 'path';
import type { S3Client } from '@aws-sdk/client-s3';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { collectJobMetrics, periodFor } from '../../lambda/diagnosis/collect-metrics';
import { JOB_DIAGNOSER_EVENT_FIELDS } from '../../lambda/job-diagnoser/contract';
import { DIAGNOSER_ENV } from '../../lib/contract/handler-environment';
import { diagnoseJob } from '../../lambda/diagnosis/diagnose-job';
import type { DiagnoserSettings} from '../../lambda/job-diagnoser/diagnoser-settings';
import { readDiagnoserSettings } from '../../lambda/job-diagnoser/diagnoser-settings';
import { diagnoseTrainingJob } from '../../lambda/job-diagnoser/diagnose-training-job';
import type { JobMetricSet} from '../../lambda/diagnosis/metric-set';
import { parseMetricSet } from '../../lambda/diagnosis/metric-set';
import { reportLocation } from '../../lambda/job-diagnoser/publish-report';
import type { AwsJsonServer} from '../support/aws-json-server';
import { AwsServiceError, awsTestClients, startAwsJsonServer } from '../support/aws-json-server';
import { describeTrainingJobResponse, metricDataAnswerer } from '../support/metric-sets';
import type { S3TestServer} from '../support/s3-server';
import { createTestBucket, s3TestClient, startS3Server } from '../support/s3-server';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'diagnosis');
const LOADER_METRICS = ['train:samples_per_second', 'train:data_wait_fraction'];
const FAST_RETRY = { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 20, retryBudgetMs: 0 };

function recorded(name: string): JobMetricSet {
  return parseMetricSet(JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8')), name);
}

let aws: AwsJsonServer;
let clients: ReturnType<typeof awsTestClients>;
let s3Server: S3TestServer;
let s3: S3Client;
let bucket: string;

beforeAll(async () => {
  aws = await startAwsJsonServer(['sagemaker', 'cloudwatch', 'events']);
  clients = awsTestClients(aws);
  s3Server = await startS3Server();
  s3 = s3TestClient(s3Server);
  bucket = await createTestBucket(s3, 'diagnosis');
}, 60_000);

afterAll(async () => {
  s3?.destroy();
  await s3Server?.stop();
  await aws?.close();
});

afterEach(() => {
  // Every request the code sent, and every response the test answered, fits the official API models.
  expect(aws.violations).toEqual([]);
  aws.reset();
});

const settings = (extra: Partial<DiagnoserSettings> = {}): DiagnoserSettings => ({
  hardware: { gpusPerInstance: 8, vcpusPerInstance: 96 },
  loaderMetrics: { samplesPerSecond: LOADER_METRICS[0], dataWaitFraction: LOADER_METRICS[1] },
  eventBusName: 'default',
  ...extra,
});

/** Answers DescribeTrainingJob, GetMetricData and PutEvents for one recorded job. */
function serve(set: JobMetricSet, options: { pageSize?: number; metricNames?: string[] } = {}): string {
  const outputPath = `s3://${bucket}/training-output/`;
  aws.on('sagemaker', 'DescribeTrainingJob', (input) => {
    if (input.TrainingJobName !== set.job.name) throw new AwsServiceError('ResourceNotFound', `Requested resource not found: ${input.TrainingJobName}`);
    return describeTrainingJobResponse(set, outputPath, options.metricNames ?? LOADER_METRICS);
  });
  aws.on('cloudwatch', 'GetMetricData', metricDataAnswerer(set, { pageSize: options.pageSize }));
  aws.on('events', 'PutEvents', () => ({ FailedEntryCount: 0, Entries: [{ EventId: '11710aed-b79e-4468-a20b-bb3c0c3b4860' }] }));
  return outputPath;
}

async function objectText(key: string): Promise<string> {
  const answer = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return answer.Body!.transformToString();
}

describe('job-diagnoser handler against SageMaker, CloudWatch and EventBridge shaped by their API models', () => {
  test('collects the job and its metrics page by page into the same metric set that was recorded', async () => {
    // GIVEN
    const set = recorded('input-bound');
    serve(set, { pageSize: 20 });
    // WHEN
    const collected = await collectJobMetrics({
      ...clients, jobName: set.job.name,
      hardwareOf: () => ({ gpusPerInstance: 8, vcpusPerInstance: 96 }),
      cache: { fileSystemId: set.cache!.fileSystemId, baselineMBps: set.cache!.baselineMBps },
    });
    // THEN
    expect(collected.job).toEqual({ ...set.job, outputPath: `s3://${bucket}/training-output/` });
    expect(collected.hosts).toEqual(set.hosts);
    expect(collected.loader).toEqual(set.loader);
    expect(collected.cache).toEqual(set.cache);
    expect(diagnoseJob(collected).verdict).toBe('input-bound');
    expect(aws.calls.filter((c) => c.operation === 'GetMetricData').length).toBeGreaterThan(1);
  });

  test('asks CloudWatch for each host\'s instance metrics, the loader\'s metrics and the cache\'s bytes read, in one-minute periods', async () => {
    // GIVEN
    const set = recorded('input-bound');
    serve(set);
    // WHEN
    await collectJobMetrics({ ...clients, jobName: set.job.name, hardwareOf: () => settings().hardware, cache: { fileSystemId: 'fs-0123456789abcdef0', baselineMBps: 2400 } });
    // THEN
    const queries = aws.calls.find((c) => c.operation === 'GetMetricData')!.input.MetricDataQueries as any[];
    const asked = queries.map((q) => `${q.MetricStat.Metric.Namespace} ${q.MetricStat.Metric.MetricName} `
      + `${q.MetricStat.Metric.Dimensions.map((d: any) => `${d.Name}=${d.Value}`).join(',')} ${q.MetricStat.Stat}/${q.MetricStat.Period}`);
    expect(asked).toEqual(expect.arrayContaining([
      `/aws/sagemaker/TrainingJobs GPUUtilization Host=${set.job.name}/algo-1 Average/60`,
      `/aws/sagemaker/TrainingJobs CPUUtilization Host=${set.job.name}/algo-2 Average/60`,
      `/aws/sagemaker/TrainingJobs DiskUtilization Host=${set.job.name}/algo-2 Average/60`,
      `/aws/sagemaker/TrainingJobs train:data_wait_fraction TrainingJobName=${set.job.name} Average/60`,
      'AWS/FSx DataReadBytes FileSystemId=fs-0123456789abcdef0 Sum/60',
    ]));
    expect(asked).toHaveLength(2 * 5 + 2 + 1);
  });

  test('does not ask for loader metrics the job does not define', async () => {
    const set = recorded('healthy');
    serve(set, { metricNames: ['train:loss'] });
    const collected = await collectJobMetrics({ ...clients, jobName: set.job.name, hardwareOf: () => settings().hardware });
    const names = (aws.calls.find((c) => c.operation === 'GetMetricData')!.input.MetricDataQueries as any[]).map((q) => q.MetricStat.Metric.MetricName);
    expect(names).not.toContain('train:samples_per_second');
    expect(collected.loader).toBeUndefined();
  });

  test('writes metrics.json, report.json and report.md beside the job\'s output and emits the event', async () => {
    // GIVEN
    const set = recorded('preprocessing-bound');
    serve(set);
    // WHEN
    const { result, diagnosis } = await diagnoseTrainingJob({ trainingJobName: set.job.name }, { ...clients, s3 },
      settings({ hardware: { gpusPerInstance: 8, vcpusPerInstance: 64 }, eventBusName: 'training-events' }), { retry: FAST_RETRY });
    // THEN
    const folder = `training-output/${set.job.name}/diagnosis/`;
    expect(result).toEqual({
      trainingJobName: set.job.name,
      verdict: 'preprocessing-bound',
      summary: diagnosis.summary,
      reportUri: `s3://${bucket}/${folder}report.json`,
      markdownUri: `s3://${bucket}/${folder}report.md`,
      metricsUri: `s3://${bucket}/${folder}metrics.json`,
    });
    expect(JSON.parse(await objectText(`${folder}report.json`))).toEqual(diagnosis);
    expect(await objectText(`${folder}report.md`)).toMatch(/^# Training job resnet50-.*: Preprocessing-bound \(CPU\)/);
    const saved = parseMetricSet(JSON.parse(await objectText(`${folder}metrics.json`)), 'metrics.json');
    expect(diagnoseJob(saved)).toEqual(diagnosis);
    const put = aws.calls.find((c) => c.operation === 'PutEvents')!.input.Entries[0];
    expect(put).toMatchObject({ EventBusName: 'training-events', Source: 'cdk-training-io', DetailType: 'Training Job Diagnosed' });
    expect(JSON.parse(put.Detail)).toEqual({ ...result, instanceType: 'ml.p3.16xlarge', instanceCount: 2 });
  });

  test('a job SageMaker does not know fails with its error, before anything is written', async () => {
    serve(recorded('healthy'));
    await expect(diagnoseTrainingJob({ trainingJobName: 'no-such-job' }, { ...clients, s3 }, settings()))
      .rejects.toThrow(/Requested resource not found: no-such-job/);
    expect(aws.calls.map((c) => c.operation)).toEqual(['DescribeTrainingJob']);
  });

  test('an event EventBridge refuses fails the diagnosis', async () => {
    const set = recorded('healthy');
    serve(set);
    aws.on('events', 'PutEvents', () => ({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'InternalFailure', ErrorMessage: 'try again' }] }));
    await expect(diagnoseTrainingJob({ trainingJobName: set.job.name }, { ...clients, s3 }, settings(), { retry: FAST_RETRY }))
      .rejects.toThrow(/EventBridge did not take the diagnosis event of resnet50-p4d-.*: InternalFailure try again/);
  });

  test('a job with instance groups is refused, naming the job', async () => {
    const set = recorded('healthy');
    aws.on('sagemaker', 'DescribeTrainingJob', () => ({
      ...describeTrainingJobResponse(set, `s3://${bucket}/out/`),
      ResourceConfig: { InstanceGroups: [{ InstanceType: 'ml.p4d.24xlarge', InstanceCount: 2, InstanceGroupName: 'gpus' }] },
    }));
    await expect(collectJobMetrics({ ...clients, jobName: set.job.name, hardwareOf: () => settings().hardware }))
      .rejects.toThrow(/training job resnet50-p4d-.* has no single InstanceType and InstanceCount/);
  });

  test('an instance type of unknown hardware is refused, saying how to give it', async () => {
    const set = recorded('healthy');
    serve(set);
    await expect(collectJobMetrics({ ...clients, jobName: set.job.name, hardwareOf: () => undefined }))
      .rejects.toThrow(/runs on ml\.p4d\.24xlarge, whose GPU and vCPU counts are unknown: give them \(GPUS_PER_INSTANCE/);
  });
});

describe('job-diagnoser inputs', () => {
  test('long jobs are read in longer periods, at most 1440 points per series', () => {
    expect(periodFor(3600)).toBe(60);
    expect(periodFor(24 * 3600)).toBe(60);
    expect(periodFor(24 * 3600 + 1)).toBe(120);
    expect(periodFor(10 * 24 * 3600)).toBe(600);
  });

  test('the report goes beside the job\'s output folder', () => {
    expect(reportLocation('s3://out-bucket/training-output/', 'job-1')).toEqual({ bucket: 'out-bucket', prefix: 'training-output/job-1/diagnosis/' });
    expect(reportLocation('s3://out-bucket', 'job-1')).toEqual({ bucket: 'out-bucket', prefix: 'job-1/diagnosis/' });
    expect(() => reportLocation('https://s3.amazonaws.com/b/', 'job-1')).toThrow(/not an s3:\/\/ URI/);
  });

  test.each<[unknown, RegExp]>([
    [null, /job-diagnoser: the event must be a JSON object/],
    [{}, /event field 'trainingJobName' must be a non-empty string, got nothing/],
    [{ trainingJobName: 'bad_name' }, /must be a SageMaker training job name, got "bad_name"/],
  ])('the event %p is refused naming the field', async (event, message) => {
    await expect(diagnoseTrainingJob(event, { ...clients, s3 }, settings())).rejects.toThrow(message);
  });

  test('the event the state machine sends has exactly the contract\'s fields', () => {
    expect(JOB_DIAGNOSER_EVENT_FIELDS).toEqual(['trainingJobName']);
  });

  test('the environment is read and checked, naming the variable', () => {
    const env = {
      [DIAGNOSER_ENV.gpusPerInstance]: '8', [DIAGNOSER_ENV.vcpusPerInstance]: '96', [DIAGNOSER_ENV.eventBusName]: 'default',
      [DIAGNOSER_ENV.cacheFileSystemId]: 'fs-0123456789abcdef0', [DIAGNOSER_ENV.cacheBaselineMBps]: '2400',
    };
    expect(readDiagnoserSettings(env)).toEqual({
      hardware: { gpusPerInstance: 8, vcpusPerInstance: 96 },
      loaderMetrics: { samplesPerSecond: 'train:samples_per_second', dataWaitFraction: 'train:data_wait_fraction' },
      cache: { fileSystemId: 'fs-0123456789abcdef0', baselineMBps: 2400 },
      eventBusName: 'default',
    });
    expect(() => readDiagnoserSettings({ ...env, [DIAGNOSER_ENV.gpusPerInstance]: 'eight' }))
      .toThrow(/GPUS_PER_INSTANCE must be a whole number of at least 0, got 'eight'/);
    expect(() => readDiagnoserSettings({ ...env, [DIAGNOSER_ENV.cacheBaselineMBps]: '' })).toThrow(/CACHE_BASELINE_MBPS is not set/);
    expect(() => readDiagnoserSettings({ ...env, [DIAGNOSER_ENV.eventBusName]: undefined })).toThrow(/EVENT_BUS_NAME is not set/);
  });
});
