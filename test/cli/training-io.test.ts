import * as fs from 'node:fs';
import * as path from 'node:path';
import { TrainingInstance } from '../../lib';
import { runCli as run } from '../support/run-cli';

describe('training-io CLI', () => {
  test('--help lists the commands and exits 0', async () => {
    const { code, stdout } = await run('--help');
    expect(code).toBe(0);
    expect(stdout).toMatch(/Usage:\n {2}training-io <command>/);
    expect(stdout).toMatch(/instances/);
    expect(stdout).toMatch(/^ {2}plan {21}plan a job's data path/m);
  });

  test('no command prints the usage and exits 2', async () => {
    expect((await run()).code).toBe(2);
  });

  test('an unknown command names it in one line, then where the usage is, and exits 2', async () => {
    const { code, stdout, stderr } = await run('bogus');
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe("training-io: unknown command 'bogus'\nRun 'training-io --help' for the usage.\n");
  });

  test.each([['packk', 'pack'], ['plna', 'plan'], ['verfy', 'verify'], ['instance', 'instances'], ['--hlep', '--help'], ['--verison', '--version']])(
    'a mistyped command %j names the closest one, %j', async (typed, meant) => {
      const { code, stderr } = await run(typed);
      expect(code).toBe(2);
      expect(stderr).toBe(`training-io: unknown command '${typed}': did you mean '${meant}'?\nRun 'training-io --help' for the usage.\n`);
    });

  test.each([
    ['pack', ['src', 'out', '--resise', '256'], "unknown option '--resise': did you mean '--resize'?"],
    ['verify', ['out', '--repiar'], "unknown option '--repiar': did you mean '--repair'?"],
    ['instances', ['--process', '2'], "unknown option '--process': did you mean '--processes'?"],
    ['plan', ['--object', '10'], "unknown option '--object': did you mean '--objects'?"],
    ['diagnose', ['job', '--metric', 'm.json'], "unknown option '--metric': did you mean '--metrics'?"],
    ['launch', ['--state-machin', 'arn'], "unknown option '--state-machin': did you mean '--state-machine'?"],
    ['pack', ['src', 'out', '--format'], "Option '--format <value>' argument missing"],
  ])('%s: a bad option is one line, then where the command\'s usage is; exit 2 and nothing on stdout', async (command, args, message) => {
    const { code, stdout, stderr } = await run(command, ...args);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(`training-io: ${message}\nRun 'training-io ${command} --help' for the usage.\n`);
  });

  test.each(['pack', 'verify', 'instances', 'plan', 'diagnose', 'launch'])('%s -h and --help print the usage on stdout, exit 0, before any other check', async (command) => {
    for (const flag of ['-h', '--help']) {
      // WHEN: with what would otherwise be a usage error (a bad region, missing positionals)
      const { code, stdout, stderr } = await run(command, flag, ...(['pack', 'verify', 'diagnose', 'launch'].includes(command) ? ['--region', 'NOT A REGION'] : []));
      // THEN
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout).toMatch(new RegExp(`^Usage: training-io ${command} `));
    }
  });

  test.each(['pack', 'verify', 'diagnose', 'launch'])('%s checks --endpoint-url and --region before anything else', async (command) => {
    expect((await run(command, '--region', 'Not_A_Region')).stderr).toMatch(/^training-io: --region must be a region name such as us-east-1, got 'Not_A_Region'\n/);
    expect((await run(command, '--endpoint-url', 'ftp://x')).stderr).toMatch(/^training-io: --endpoint-url must be an http:\/\/ or https:\/\/ URL, got 'ftp:\/\/x'\n/);
  });

  test('launch --help prints the bounds of --poll as numbers', async () => {
    const { stdout } = await run('launch', '--help');
    expect(stdout).toMatch(/--poll SECONDS +how often to check progress, 1-3600 \(default: 30\)/);
    expect(stdout).not.toContain('${');
  });

  test('plan --instance cut short names the instance it begins', async () => {
    const { code, stderr } = await run('plan', '--objects', '10', '--bytes', '1GB', '--instance', 'ml.p4d.24xl');
    expect(code).toBe(2);
    expect(stderr).toMatch(/got 'ml\.p4d\.24xl': did you mean 'ml\.p4d\.24xlarge'\?/);
  });

  test('--version prints the package version', async () => {
    const { code, stdout } = await run('--version');
    expect(code).toBe(0);
    expect(stdout.trim()).toBe(JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')).version);
  });

  test('instances lists every catalogued type with its sized workers', async () => {
    const { code, stdout } = await run('instances');
    expect(code).toBe(0);
    for (const instance of TrainingInstance.all()) {
      expect(stdout).toContain(instance.instanceType);
    }
    // p3dn.24xlarge: 96 vCPUs / 8 GPUs − 1 = 11 workers per process
    expect(stdout).toMatch(/ml\.p3dn\.24xlarge .* 8 +11 +11\n/);
  });

  test('instances runs one process per NeuronCore on Trainium, as Neuron does by default, and sizes the workers for them', async () => {
    const { stdout } = await run('instances');
    // 128 vCPUs / 32 NeuronCores − 1 = 3 workers; 192 / 64 − 1 = 2; 8 / 2 − 1 = 3
    expect(stdout).toMatch(/^ml\.trn1\.32xlarge .* 32 +3 +3$/m);
    expect(stdout).toMatch(/^ml\.trn1n\.32xlarge .* 32 +3 +3$/m);
    expect(stdout).toMatch(/^ml\.trn2\.48xlarge .* 64 +2 +2$/m);
    expect(stdout).toMatch(/^ml\.trn1\.2xlarge .* 2 +3 +3$/m);
  });

  test('instances --processes 1 sizes for one process per instance and skips types with fewer vCPUs', async () => {
    const { stdout } = await run('instances', '--processes', '1');
    // g4dn.12xlarge: 48 vCPUs, one process → 47 by CPU; 192 GiB / 2 GiB = 96 by memory
    expect(stdout).toMatch(/ml\.g4dn\.12xlarge .* 1 +47 +47\n/);
  });

  test('instances --memory-per-worker caps workers by memory and marks them', async () => {
    const { stdout } = await run('instances', '--memory-per-worker', '8');
    // g4dn.xlarge: 3 by CPU, 16 GiB / 8 GiB = 2 by memory
    expect(stdout).toMatch(/ml\.g4dn\.xlarge .* 1 +2\* +3\n/);
  });

  test.each([
    [['instances', '--processes', '0'], /--processes must be a whole number ≥ 1, got '0'/],
    [['instances', '--processes', '1.5'], /--processes must be a whole number ≥ 1, got '1.5'/],
    [['instances', '--processes', '1000'], /--processes must be between 1 and 192, got '1000': each process needs a vCPU, and no catalogued instance has more than 192/],
    [['instances', '--memory-per-worker', 'lots'], /--memory-per-worker must be a number greater than 0, got 'lots'/],
    [['instances', '--bogus'], /unknown option '--bogus'/],
  ])('bad input %j is named with what is allowed and exits 2', async (argv, message) => {
    const { code, stderr } = await run(...argv);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});
