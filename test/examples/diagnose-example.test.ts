import * as path from 'path';
import { runCli } from '../support/run-cli';

// examples/diagnose/: the metric sets the README offers to try `training-io diagnose` offline.

const EXAMPLE = path.join(__dirname, '..', '..', 'examples', 'diagnose');

describe('examples/diagnose', () => {
  test.each([
    ['healthy', ['healthy'], /^# Training job resnet50-g5-healthy-0001: Healthy: the GPUs were fed$/m],
    ['starved', ['preprocessing-bound'], /^# Training job resnet50-g5-starved-0002: Preprocessing-bound \(CPU\)$/m],
  ])('training-io diagnose --metrics %s/metrics.json finds %j', async (job, verdicts, heading) => {
    // GIVEN
    const metrics = path.join(EXAMPLE, job, 'metrics.json');
    // WHEN
    const json = await runCli('diagnose', '--metrics', metrics, '--json');
    const markdown = await runCli('diagnose', '--metrics', metrics);
    // THEN
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).findings.map((finding: { verdict: string }) => finding.verdict)).toEqual(verdicts);
    expect(markdown).toMatchObject({ code: 0, stderr: '' });
    expect(markdown.stdout).toMatch(heading);
  });
});
