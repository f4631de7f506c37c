const os = require('node:os');

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Type checking runs once for the whole tree in `npm run typecheck`; per-file
  // transpilation keeps each jest worker fast.
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
  // examples/ import the library by its package name, as users do; in this repository that is lib/.
  moduleNameMapper: { '^cdk-training-io$': '<rootDir>/lib/index.ts' },
  testTimeout: 60000,
  // A worker per core, not jest's default of one less: most suites spend much of their time waiting
  // on a subprocess (the S3 server, a build, Python) or a timer, and on 2 cores one less is one worker,
  // every suite in turn.
  maxWorkers: Math.max(2, os.availableParallelism()),
  // The slowest suites first on a fresh clone, where jest has no timings yet to order by.
  testSequencer: '<rootDir>/test/support/slow-first-sequencer.js',
  // Bundles the handlers when stale and picks the S3 test server; the teardown counts its skipped checks.
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};
