const Sequencer = require('@jest/test-sequencer').default;

/**
 * The suites that take longest, longest first: each builds or packs the package, or runs a state
 * machine, a server or many subprocesses. From a run of every suite on 2 vCPUs (the order matters,
 * not the figures); a suite missing here only starts later.
 */
const SLOWEST_SUITES = [
  'test/package/package.test.ts',
  'test/packing/protocol/fault-injection.test.ts',
  'test/cli/pack-cli.test.ts',
  'test/examples/examples.test.ts',
  'test/pipeline/training-pipeline-state-machine.execution.test.ts',
  'test/container/container-python.test.ts',
  'test/cli/publish-protocol-cli.test.ts',
  'test/io/s3-storage.test.ts',
  'test/sharding/handlers-s3.test.ts',
  'test/sharding/packing-state-machine.execution.test.ts',
  'test/docs/code-blocks.test.ts',
  'test/examples/custom-model-train.test.ts',
  'test/cli/pack-s3-cli.test.ts',
  'test/app/reference-app.test.ts',
  'test/packing/honest-failures.test.ts',
];

/**
 * Jest's order, with the slowest suites first where jest has no timings of its own (a fresh clone,
 * or a new cache folder). Jest then sorts by file size, which can leave a worker starting the
 * package's build when the others are done; the whole run waits for it. With timings from an
 * earlier run, jest's order (failed first, then longest first) is kept.
 */
class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const rank = (test) => {
      if (test.duration != null) return SLOWEST_SUITES.length;
      const index = SLOWEST_SUITES.indexOf(relativePath(test));
      return index === -1 ? SLOWEST_SUITES.length : index;
    };
    // Array.prototype.sort is stable: the rest keep jest's order.
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}

/** The suite's path from the repository root, with forward slashes. */
function relativePath(test) {
  return test.path.slice(test.context.config.rootDir.length + 1).split('\\').join('/');
}

module.exports = SlowFirstSequencer;
module.exports.SLOWEST_SUITES = SLOWEST_SUITES;
