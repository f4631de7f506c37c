import * as path from 'path';
type Tier = 'fast' | 'full';
type Classification = { readonly tier: Tier; readonly why?: string };

/** The classifier jest.fast.config.js uses: a plain CommonJS module, as jest loads its config. */
const { allSuites, classifySuite, suitesOf, ROOT }: {
  allSuites(): string[];
  classifySuite(suite: string, read?: (file: string) => string, exists?: (file: string) => boolean): Classification;
  suitesOf(tier: Tier): string[];
  ROOT: string;
} = require('./test-tiers'); // eslint-disable-line @typescript-eslint/no-require-imports

/** A repository held in memory: the classifier reads these sources instead of the real files. */
function classifyIn(files: Record<string, string>, suite: string) {
  return classifySuite(suite, (file) => files[file], (file) => file in files);
}

describe('test tiers', () => {
  // The calls are split in two strings, so that this suite's own source does not read as starting something.
  const repository: Record<string, string> = {
    'test/server.test.ts': "import { startServer } from './support/server';\n",
    'test/support/server.ts': "import { listen } from './listen';\nexport const startServer = listen;\n",
    'test/support/listen.ts': "import * as net from 'node:net';\nexport const listen = () => net.create" + 'Server();\n',
    'test/types-only.test.ts': "import type { Server } from './support/server';\nimport { type A, type B } from './support/server';\nimport { pure } from '../lib/pure';\n",
    'lib/pure.ts': "import * as fs from 'fs';\nexport const pure = fs.existsSync;\n",
    'test/spawn.test.ts': 'const { spawnSync } = require' + "('node:child_process');\n",
    'test/pool.test.ts': "import { pool } from '../lambda/pool';\n",
    'lambda/pool.ts': "import { Worker } from 'worker_threads';\nexport const pool = Worker;\n",
    'test/guard.test.ts': "import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';\n",
    'test/dynamic.test.ts': 'const load = () => import' + "('../lambda/pool');\n",
  };

  test.each([
    ['test/server.test.ts', 'test/server.test.ts → test/support/server.ts → test/support/listen.ts starts a server (createServer)'],
    ['test/spawn.test.ts', 'test/spawn.test.ts imports child_process'],
    ['test/pool.test.ts', 'test/pool.test.ts → lambda/pool.ts imports worker_threads'],
    ['test/guard.test.ts', 'test/guard.test.ts uses @cdklabs/cdk-validator-cfnguard, which starts a process'],
    ['test/dynamic.test.ts', 'test/dynamic.test.ts → lambda/pool.ts imports worker_threads'],
  ])('%s is full: what it loads starts something', (suite, why) => {
    expect(classifyIn(repository, suite)).toEqual({ tier: 'full', why });
  });

  test('a suite that loads only pure modules, and a server module only for its types, is fast', () => {
    expect(classifyIn(repository, 'test/types-only.test.ts')).toEqual({ tier: 'fast' });
  });

  test('the suites of the S3 server, the CLI\'s pack, Python, the package build and cfn-guard are full; pure decisions are fast', () => {
    // WHEN
    const tierOf = (suite: string) => classifySuite(suite).tier;
    // THEN
    for (const suite of [
      'test/io/s3-storage.test.ts', 'test/cli/pack-cli.test.ts', 'test/container/container-python.test.ts',
      'test/package/package.test.ts', 'test/app/control-tower.test.ts', 'test/packing/local-shard-pool.test.ts',
    ]) expect([suite, tierOf(suite)]).toEqual([suite, 'full']);
    for (const suite of ['test/packing/plan-version.test.ts', 'test/packing/planning/plan-shards.test.ts', 'test/support/test-tiers.test.ts']) {
      expect([suite, tierOf(suite)]).toEqual([suite, 'fast']);
    }
  });

  test('the fast config runs exactly the fast suites; the default config, every suite of both tiers', () => {
    // GIVEN
    /* eslint-disable @typescript-eslint/no-require-imports */
    const fastConfig = require(path.join(ROOT, 'jest.fast.config.js'));
    const defaultConfig = require(path.join(ROOT, 'jest.config.js'));
    /* eslint-enable @typescript-eslint/no-require-imports */
    const fast = suitesOf('fast');
    const full = suitesOf('full');
    // THEN
    expect(fastConfig.testMatch).toEqual(fast.map((suite) => `<rootDir>/${suite}`));
    expect([...fast, ...full].sort()).toEqual(allSuites());
    expect(fast.length).toBeGreaterThan(0);
    expect(full.length).toBeGreaterThan(0);
    expect(defaultConfig).toMatchObject({ roots: ['<rootDir>/test'], testMatch: ['**/*.test.ts'] });
    expect(defaultConfig.testPathIgnorePatterns).toBeUndefined();
  });
});
