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
  // Constructs reference the bundled handlers in lambda/dist/: build them when missing or stale.
  globalSetup: '<rootDir>/scripts/bundle-lambdas.mjs',
};
