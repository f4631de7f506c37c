import * as fs from 'fs';
import * as path from 'path';
import { diagnoseJob } from '../../lambda/diagnosis/diagnose-job';
import type { JobMetricSet} from '../../lambda/diagnosis/metric-set';
import { parseMetricSet } from '../../lambda/diagnosis/metric-set';
import { renderMarkdown } from '../../lambda/diagnosis/render-report';
import type { AwsJsonServer} from '../support/aws-json-server';
import { AwsServiceError, useAwsJsonServer } from '../support/aws-json-server';
import { temporaryFolders } from '../support/local-files';
import { describeTrainingJobResponse, metricDataAnswerer } from '../support/metric-sets';
import { runCli } from '../support/run-cli';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'diagnosis');
const folder = temporaryFolders();
let aws: AwsJsonServer;

function recorded(name: string): JobMetricSet {
  return parseMetricSet(JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8')), name);
}

/** Answers for the job of a recorded metric set, with its own output path so that collecting gives the set back. */
function serve(set: JobMetricSet): void {
  aws.on('sagemaker', 'DescribeTrainingJob', (input) => {
    if (input.TrainingJobName !== set.job.name) throw new AwsServiceError('ResourceNotFound', `Requested resource not found: ${input.TrainingJobName}`);
    return describeTrainingJobResponse(set, set.job.outputPath!, ['train:samples_per_second', 'train:data_wait_fraction', 'train:loss']);
  });
  aws.on('cloudwatch', 'GetMetricData', metricDataAnswerer(set));
}

function live(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli('diagnose', ...args, '--endpoint-url', aws.endpoint, '--region', 'us-east-1');
}

useAwsJsonServer(['sagemaker', 'cloudwatch'], (server) => {
  aws = server;
});

describe('training-io diagnose', () => {
  test('live and offline print the same report: live from SageMaker and CloudWatch, offline from the saved metric set', async () => {
    // GIVEN
    const set = recorded('input-bound');
    serve(set);
    const saved = path.join(folder('diagnose'), 'metrics.json');
    // WHEN
    const fromAws = await live(set.job.name, '--cache-id', 'fs-0123456789abcdef0', '--cache-baseline-mbps', '2400', '--save-metrics', saved);
    const fromFile = await runCli('diagnose', '--metrics', saved);
    // THEN
    expect(fromAws.code).toBe(0);
    expect(fromAws.stderr).toContain(`metric set of ${set.job.name} saved to ${saved}`);
    expect(fromAws.stdout).toBe(renderMarkdown(diagnoseJob(set)));
    expect(fromFile).toEqual({ code: 0, stdout: fromAws.stdout, stderr: '' });
  });

  test('takes the GPU and vCPU counts of catalogued instance types from the catalog', async () => {
    const set = recorded('preprocessing-bound');
    serve(set);
    const { code, stdout } = await live(set.job.name);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^# Training job resnet50-.*: Preprocessing-bound \(CPU\)/);
    expect(stdout).toContain('2 × ml.p3.16xlarge (8 GPU(s), 64 vCPUs each)');
  });

  test('--json prints report.json', async () => {
    const file = path.join(FIXTURES, 'healthy.json');
    const { code, stdout } = await runCli('diagnose', '--metrics', file, '--json');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual(diagnoseJob(recorded('healthy')));
  });

  test('an instance type outside the catalog needs --gpus and --vcpus', async () => {
    const set = { ...recorded('healthy'), job: { ...recorded('healthy').job, instanceType: 'ml.p6-b200.48xlarge' } };
    serve(set);
    const refused = await live(set.job.name);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/runs on ml\.p6-b200\.48xlarge, whose GPU and vCPU counts are unknown: .*--gpus and --vcpus/);
    const given = await live(set.job.name, '--gpus', '8', '--vcpus', '96');
    expect(given.code).toBe(0);
  });

  test('a job SageMaker does not know exits 1 with its answer', async () => {
    serve(recorded('healthy'));
    const { code, stderr } = await live('no-such-job');
    expect(code).toBe(1);
    expect(stderr).toMatch(/training-io diagnose: Requested resource not found: no-such-job/);
  });

  test.each<[string[], number, RegExp]>([
    [['--metrics', '/nonexistent/metrics.json'], 1, /cannot read --metrics \/nonexistent\/metrics\.json/],
    [['--metrics', __filename], 1, /diagnose-cli\.test\.ts is not JSON/],
    [['job-1', '--metrics', 'x.json'], 2, /give a job name or --metrics FILE, not both/],
    [['--metrics', 'x.json', '--gpus', '8'], 2, /--gpus reads the live job: it does not apply to --metrics FILE/],
    [[], 2, /diagnose takes one training job name \(or --metrics FILE\), got 0 argument/],
    [['bad_name'], 2, /'bad_name' is not a SageMaker training job name/],
    [['job-1', '--gpus', '8'], 2, /give --gpus and --vcpus together/],
    [['job-1', '--cache-id', 'fsx-1', '--cache-baseline-mbps', '100'], 2, /--cache-id must be an FSx file system ID/],
    [['job-1'], 2, /the AWS calls need a region: pass --region/],
  ])('diagnose %j exits %p naming the problem', async (args, code, message) => {
    const result = await runCli('diagnose', ...args);
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
  });

  test('a metric set that breaks the format is refused naming the field', async () => {
    const file = path.join(folder('bad-set'), 'metrics.json');
    fs.writeFileSync(file, JSON.stringify({ ...recorded('healthy'), periodSeconds: -60 }));
    const { code, stderr } = await runCli('diagnose', '--metrics', file);
    expect(code).toBe(1);
    expect(stderr).toContain(`${file}: periodSeconds must be a number greater than 0, got -60`);
  });

  test('a phase that ends before it starts is refused naming the phase and its times', async () => {
    // GIVEN: the download recorded as ending an hour before it starts
    const set = recorded('healthy');
    const phases = set.job.phases.map((phase) => (phase.status === 'Downloading' ? { ...phase, end: '2026-11-02T08:03:00.000Z' } : phase));
    const file = path.join(folder('bad-phase'), 'metrics.json');
    fs.writeFileSync(file, JSON.stringify({ ...set, job: { ...set.job, phases } }));

    // WHEN
    const { code, stdout, stderr } = await runCli('diagnose', '--metrics', file);

    // THEN
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain(`${file}: job.phases[1] (Downloading) ends at 2026-11-02T08:03:00.000Z, before it starts at 2026-11-02T09:03:00.000Z: `
      + 'a phase must end at or after its start');
  });
});
