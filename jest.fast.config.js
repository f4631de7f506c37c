const base = require('./jest.config');
const { suitesOf } = require('./test/support/test-tiers');

/**
 * `npm run test:fast`: the suites that start no server, process, thread or build (test/support/test-tiers.js
 * decides from what each suite loads), for a quick answer while changing the code. `npm test` runs them
 * with the rest. No S3 test server is chosen: no fast suite reaches one.
 */
/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: suitesOf('fast').map((suite) => `<rootDir>/${suite}`),
  globalSetup: '<rootDir>/test/support/fast-global-setup.ts',
  globalTeardown: '<rootDir>/test/support/fast-global-teardown.ts',
};
