import { PACKING_ENV } from '../../lib/contract/handler-environment';
import type { RawPackingSettings } from '../../lib/contract/packing-settings';
import {
  checkPackingSettings, fromEnvironment, normalizePackingSettings, PACKING_DEFAULTS, PACKING_ENV_NAMES, PACKING_LIMITS, PackingSettingsError,
  shardCountFor, shardCountRounding, sizingOf, toEnvironment,
} from '../../lib/contract/packing-settings';
import { MIB } from '../../lib/contract/units';

describe('the packing settings codec', () => {
  test('normalize applies every default', () => {
    expect(normalizePackingSettings({})).toEqual({
      format: 'tfrecord', seed: 0, labels: 'folder', targetShardBytes: 64 * MIB, consumers: 1,
      readConcurrency: PACKING_DEFAULTS.readConcurrency, retentionDays: 7, allowMissing: false,
    });
    expect(normalizePackingSettings({}, true).readConcurrency).toBe(PACKING_DEFAULTS.localReadConcurrency);
  });

  test('normalize keeps what is given, and an exact count only when given', () => {
    // GIVEN
    const raw: RawPackingSettings = { format: 'recordio', seed: 5, labels: 'none', shardCount: 10, consumers: 3, readConcurrency: 8, retentionDays: 0, allowMissing: true };
    // THEN
    expect(normalizePackingSettings(raw)).toEqual(raw);
    expect('shardCount' in normalizePackingSettings({})).toBe(false);
    expect('targetShardBytes' in normalizePackingSettings({ shardCount: 2 })).toBe(false);
  });

  test('the defaults are within the limits', () => {
    for (const setting of ['seed', 'consumers', 'readConcurrency', 'retentionDays', 'targetShardBytes'] as const) {
      const { min, max } = PACKING_LIMITS[setting];
      expect(PACKING_DEFAULTS[setting]).toBeGreaterThanOrEqual(min);
      expect(PACKING_DEFAULTS[setting]).toBeLessThanOrEqual(max);
    }
    expect(checkPackingSettings(PACKING_DEFAULTS)).toEqual([]);
  });

  test.each<[string, RawPackingSettings, RegExp]>([
    ['a shard size under 1 MiB', { targetShardBytes: MIB - 1 }, /^targetShardSize must be a whole number of bytes between 1 MiB \(1048576\) and 128 MiB \(134217728\), got 0.99999905 MiB \(1048575 bytes\)$/],
    ['a shard size over 128 MiB', { targetShardBytes: 200 * MIB }, /^targetShardSize must be .*got 200 MiB \(209715200 bytes\)$/],
    ['no shards', { shardCount: 0 }, /^shardCount must be a whole number ≥ 1, got 0$/],
    ['a fraction of a consumer', { consumers: 1.5 }, /^consumers .* must be a whole number ≥ 1, got 1.5$/],
    ['a negative seed', { seed: -1 }, /^seed must be a whole number ≥ 0, got -1$/],
    ['too many reads at once', { readConcurrency: 1025 }, /^packerConcurrency must be a whole number between 1 and 1024, got 1025$/],
    ['a century of retention', { retentionDays: 36_500 }, /^versionRetention \(days\) must be a whole number between 0 and 3650, got 36500$/],
    ['a size and a count', { targetShardBytes: 8 * MIB, shardCount: 4 }, /^give targetShardSize or shardCount, not both/],
    ['an unknown format', { format: 'parquet' }, /^format must be 'tfrecord' or 'recordio', got "parquet"$/],
    ['no part', { parts: [] }, /^parts must name one or more distinct parts, .*got \[\]$/],
    ['a part twice', { parts: ['jpg', 'jpg'] }, /^parts must name one or more distinct parts/],
    ['a part with a path', { parts: ['jpg', 'a/json'] }, /^parts must name .*; "a\/json" is not one, got/],
    ['a part with a leading dot', { parts: ['jpg', '.json'] }, /; "\.json" is not one/],
    ['unknown labels', { labels: 'class' }, /^labels must be 'folder' or 'none' or 'file', got "class"$/],
    ['a label file of another format', { labelFile: 's3://bucket/labels.txt' }, /^labelFile "s3:\/\/bucket\/labels.txt" must end in '.csv' or '.jsonl'/],
  ])('check refuses %s, naming the setting, the value and what is allowed', (_name, raw, message) => {
    // WHEN
    const problems = checkPackingSettings(raw);
    // THEN
    expect(problems).toHaveLength(1);
    expect(problems[0].code).toMatch(/^(Invalid|ShardSizeAndCount)/);
    expect(problems[0].message).toMatch(message);
  });

  test.each<[string, RawPackingSettings, string, RegExp]>([
    ['labels file without a label file', { labels: 'file' }, 'LabelFileMissing', /^labels 'file' takes the labels from a label file: give labelFile/],
    ['a label file with folder labels', { labels: 'folder', labelFile: 'labels.csv' }, 'LabelFileWithOtherLabels',
      /^labelFile is read with labels 'file' only, got labels "folder": leave out one of them$/],
  ])('check refuses %s', (_name, raw, code, message) => {
    expect(checkPackingSettings(raw)).toEqual([{ setting: 'labelFile', code, message: expect.stringMatching(message) }]);
  });

  test('a label file alone asks for labels \'file\'; without one the labels stay as given or the default', () => {
    expect(normalizePackingSettings({ labelFile: 'meta/labels.jsonl' })).toMatchObject({ labels: 'file', labelFile: 'meta/labels.jsonl' });
    expect(normalizePackingSettings({ labelFile: 'Labels.CSV', labels: 'file' })).toMatchObject({ labels: 'file', labelFile: 'Labels.CSV' });
    expect('labelFile' in normalizePackingSettings({ labels: 'none' })).toBe(false);
  });

  test('check names each setting as the caller calls it', () => {
    expect(checkPackingSettings({ consumers: 0 }, { ...PACKING_ENV_NAMES, consumers: '--consumers' })[0].message)
      .toBe('--consumers must be a whole number ≥ 1, got 0');
  });

  test.each([[10, 3, 12], [12, 3, 12], [1, 4, 4], [7, 1, 7]])('an exact count of %i for %i consumers becomes %i shards', (count, consumers, shards) => {
    expect(checkPackingSettings({ shardCount: count, consumers })).toEqual([]);
    expect(shardCountFor(count, consumers)).toBe(shards);
    expect(shardCountRounding({ shardCount: count, consumers }) === undefined).toBe(count === shards);
  });

  test('the rounding is said with both counts and the consumers', () => {
    expect(shardCountRounding({ shardCount: 10, consumers: 3 }))
      .toBe('shardCount 10 is rounded up to 12, a multiple of the 3 consumers, so that every reader gets the same number of shards');
  });

  test('the sizing records the target only without an exact count', () => {
    expect(sizingOf(normalizePackingSettings({}))).toEqual({ targetShardBytes: 64 * MIB, shardCount: null, consumers: 1 });
    expect(sizingOf(normalizePackingSettings({ shardCount: 4, consumers: 2 }))).toEqual({ targetShardBytes: null, shardCount: 4, consumers: 2 });
  });

  test.each<[string, RawPackingSettings]>([
    ['the defaults', {}],
    ['an exact count', { format: 'recordio', seed: 9, labels: 'none', shardCount: 10, consumers: 3, readConcurrency: 16, retentionDays: 0, allowMissing: true }],
    ['a target size', { targetShardBytes: 8 * MIB, consumers: 4, retentionDays: 30 }],
    ['required sample parts', { parts: ['json', 'jpg', 'mask.png'] }],
    ['a label file', { labelFile: 's3://source-bucket/meta/labels.csv', seed: 2 }],
  ])('the environment round-trips %s', (_name, raw) => {
    // GIVEN
    const settings = normalizePackingSettings(raw);
    const { planner, packer, finalizer } = toEnvironment(settings);
    // WHEN
    const decoded = fromEnvironment({ ...planner, ...packer, ...finalizer });
    // THEN
    expect(decoded).toEqual(settings);
  });

  test('the required parts are kept sorted, and absent when not given', () => {
    expect(normalizePackingSettings({ parts: ['mask.png', 'jpg'] }).parts).toEqual(['jpg', 'mask.png']);
    expect('parts' in normalizePackingSettings({})).toBe(false);
    expect(toEnvironment(normalizePackingSettings({ parts: ['txt', 'jpg'] })).planner[PACKING_ENV.parts]).toBe('jpg,txt');
  });

  test('fromEnvironment refuses a malformed variable, naming it', () => {
    expect(() => fromEnvironment({ [PACKING_ENV.consumers]: 'three' })).toThrow(PackingSettingsError);
    expect(() => fromEnvironment({ [PACKING_ENV.consumers]: 'three' })).toThrow("environment variable CONSUMERS must be a whole number, got 'three'");
    expect(() => fromEnvironment({ [PACKING_ENV.consumers]: '0' })).toThrow('environment variable CONSUMERS must be a whole number ≥ 1, got 0');
    expect(() => fromEnvironment({ [PACKING_ENV.allowMissing]: 'yes' })).toThrow("environment variable ALLOW_MISSING must be 'true' or 'false', got 'yes'");
    expect(() => fromEnvironment({ [PACKING_ENV.format]: 'zip' })).toThrow('environment variable SHARD_FORMAT must be \'tfrecord\' or \'recordio\', got "zip"');
  });
});
