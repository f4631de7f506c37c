import { closestMatch, didYouMean, editDistance } from '../../bin/cli/did-you-mean';
import { parseCommandArgs } from '../../bin/cli/command-args';
import { parseChoice, parsePositiveNumber, parseSize, parseWholeNumber, UsageError } from '../../bin/cli/usage-error';

describe('parseSize', () => {
  test.each([
    ['64MiB', 64 * 2 ** 20],
    ['100MB', 100e6],
    ['1.5GiB', 1.5 * 2 ** 30],
    ['1.5 GB', 1.5e9],
    ['8kib', 8192],
    ['8KB', 8000],
    ['512b', 512],
    ['2TB', 2e12],
    ['1TiB', 2 ** 40],
    ['1048576', 1048576],
    [' 2MiB ', 2 * 2 ** 20],
  ])('%j is %d bytes', (raw, bytes) => {
    // WHEN / THEN
    expect(parseSize('--shard-size', raw)).toBe(bytes);
  });

  test.each(['12parsecs', '64M', 'MiB', '', '-5MiB', '1e6', '1,5GiB', '64MiB64'])('%j is refused, naming the flag and the forms it takes', (raw) => {
    // WHEN / THEN
    expect(() => parseSize('--shard-size', raw)).toThrow(UsageError);
    expect(() => parseSize('--shard-size', raw))
      .toThrow(`--shard-size must be a size such as 64MiB, 100MB or 1048576 (bytes), got '${raw}'`);
  });
});

describe('parseWholeNumber', () => {
  test.each([['1', 1], ['4096', 4096], ['007', 7]])('%j within 1–4096 is %d', (raw, value) => {
    expect(parseWholeNumber('--concurrency', raw, 1, 4096)).toBe(value);
  });

  test.each(['0', '4097', '1.5', '-1', '1e3', '0x10', '', 'many'])('%j is refused, naming the flag and the range', (raw) => {
    expect(() => parseWholeNumber('--concurrency', raw, 1, 4096))
      .toThrow(new UsageError(`--concurrency must be a whole number between 1 and 4096, got '${raw}'`));
  });

  test('without a maximum, the range ends at the largest safe integer', () => {
    expect(parseWholeNumber('--shards', '9007199254740991', 1)).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => parseWholeNumber('--shards', '9007199254740992', 1)).toThrow(/between 1 and 9007199254740991/);
  });
});

describe('parseChoice', () => {
  test('returns one of the allowed words and refuses others, listing them', () => {
    expect(parseChoice('--format', 'recordio', ['tfrecord', 'recordio'])).toBe('recordio');
    expect(() => parseChoice('--format', 'TFRecord', ['tfrecord', 'recordio']))
      .toThrow("--format must be one of tfrecord, recordio, got 'TFRecord'");
  });
});

describe('parsePositiveNumber', () => {
  test.each([['0.5', 0.5], ['2', 2]])('%j is %d', (raw, value) => {
    expect(parsePositiveNumber('--memory-per-worker', raw)).toBe(value);
  });

  test.each(['0', '-1', 'lots', '', 'Infinity'])('%j is refused', (raw) => {
    expect(() => parsePositiveNumber('--memory-per-worker', raw))
      .toThrow(`--memory-per-worker must be a number greater than 0, got '${raw}'`);
  });
});

describe('parseCommandArgs', () => {
  const config = { args: [] as string[], strict: true, options: { format: { type: 'string' }, resize: { type: 'string' }, help: { type: 'boolean', short: 'h' } } } as const;

  test.each([
    [['--bogus'], "unknown option '--bogus'"],
    [['--resise', '256'], "unknown option '--resise': did you mean '--resize'?"],
    [['--resise=256'], "unknown option '--resise': did you mean '--resize'?"],
    [['--formt', 'recordio'], "unknown option '--formt': did you mean '--format'?"],
    [['-x'], "unknown option '-x'"],
    [['--help', '--helpp'], "unknown option '--helpp': did you mean '--help'?"],
  ])('%j is a UsageError naming the option, and the closest known one where one is close', (args, message) => {
    expect(() => parseCommandArgs({ ...config, args })).toThrow(new UsageError(message));
  });

  test('a missing value is a UsageError', () => {
    expect(() => parseCommandArgs({ ...config, args: ['--format'] })).toThrow(UsageError);
    expect(() => parseCommandArgs({ ...config, args: ['--format'] })).toThrow(/Option '--format <value>' argument missing/);
  });

  test.each([['-3'], ['-0.5'], ['-.5']])('a negative number after an option that takes a value is its value: %j', (value) => {
    // WHEN
    const { values } = parseCommandArgs({ ...config, args: ['--format', value] });

    // THEN
    expect(values.format).toBe(value);
  });

  test('an option after an option that takes a value is still a missing value', () => {
    expect(() => parseCommandArgs({ ...config, args: ['--format', '-x'] })).toThrow(/argument is ambiguous/);
  });
});

describe('closestMatch', () => {
  test.each([
    ['packk', 'pack'],
    ['plna', 'plan'],
    ['verfy', 'verify'],
    ['instance', 'instances'],
    ['--resise', '--resize'],
  ])('%j is closest to %j', (word, match) => {
    expect(closestMatch(word, ['pack', 'verify', 'instances', 'plan', 'diagnose', 'launch', '--resize', '--quality'])).toBe(match);
  });

  test.each(['train', 'x', 'deploy', '--verbose'])('%j is close to none: no guess', (word) => {
    expect(closestMatch(word, ['pack', 'verify', 'instances', 'plan', 'diagnose', 'launch', '--resize'])).toBeUndefined();
  });

  test.each([
    ['ml.p4d.24xl', ": did you mean 'ml.p4d.24xlarge'?"],
    ['ml.p4d', ": did you mean 'ml.p4d.24xlarge' or 'ml.p4de.24xlarge'?"],
    ['ml.p4d.24xlarg', ": did you mean 'ml.p4d.24xlarge'?"],
    ['ml', ''],
    ['ml.z9', ''],
  ])('didYouMean(%j) names the names it begins where none is within 2 edits: %j', (word, hint) => {
    expect(didYouMean(word, ['ml.p4d.24xlarge', 'ml.p4de.24xlarge', 'ml.p5.48xlarge'])).toBe(hint);
  });

  test.each([['kitten', 'sitting', 3], ['', 'abc', 3], ['pack', 'pack', 0], ['flaw', 'lawn', 2], ['plna', 'plan', 1], ['ab', 'ba', 1]])('editDistance(%j, %j) is %d', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
  });
});
