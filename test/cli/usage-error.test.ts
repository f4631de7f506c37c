import { parseChoice, parseCommandArgs, parsePositiveNumber, parseSize, parseWholeNumber, UsageError } from '../../bin/cli/usage-error';

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
  const config = { args: [] as string[], strict: true, options: { format: { type: 'string' } } } as const;

  test.each([
    [['--bogus'], /Unknown option '--bogus'/],
    [['--format'], /Option '--format <value>' argument missing/],
  ])('%j is a UsageError carrying the command usage', (args, message) => {
    // WHEN
    let caught: unknown;
    try {
      parseCommandArgs({ ...config, args }, 'Usage: test');
    } catch (error) {
      caught = error;
    }

    // THEN
    expect(caught).toBeInstanceOf(UsageError);
    expect((caught as UsageError).message).toMatch(message);
    expect((caught as UsageError).usage).toBe('Usage: test');
  });

  test.each([['-3'], ['-0.5'], ['-.5']])('a negative number after an option that takes a value is its value: %j', (value) => {
    // WHEN
    const { values } = parseCommandArgs({ ...config, args: ['--format', value] }, 'Usage: test');

    // THEN
    expect(values.format).toBe(value);
  });

  test('an option after an option that takes a value is still a missing value', () => {
    expect(() => parseCommandArgs({ ...config, args: ['--format', '-x'] }, 'Usage: test')).toThrow(/argument is ambiguous/);
  });
});
