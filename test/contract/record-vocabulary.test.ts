import { DEFAULT_LABEL_MODE, DEFAULT_SHARD_FORMAT, defaultRecordContent, isOneOf, LABEL_MODES, RECORD_CONTENTS, SHARD_FORMAT_NAMES } from '../../lib/contract/record-vocabulary';
import { DEFAULT_SHARD_BYTES, MAX_SHARD_BYTES, MIN_SHARD_BYTES } from '../../lib/contract/shard-limits';
import { RecordContent } from '../../lib/vocabulary/record-content';
import { RecordLabels } from '../../lib/vocabulary/record-labels';
import { ShardFormat } from '../../lib/vocabulary/shard-format';

// The constructs' enums (jsii, literal values) and the contract's names the engine derives its
// unions from must be the same sets: a value added to one side only fails here.
describe('the record vocabulary', () => {
  test.each([
    ['ShardFormat', Object.values(ShardFormat), SHARD_FORMAT_NAMES],
    ['RecordLabels', Object.values(RecordLabels), LABEL_MODES],
    ['RecordContent', Object.values(RecordContent), RECORD_CONTENTS],
  ])('%s has exactly the contract\'s names', (_name, enumValues, names) => {
    expect([...enumValues].sort()).toEqual([...names].sort());
  });

  test('the defaults are names of the vocabulary, and the enums\' documented defaults', () => {
    expect(DEFAULT_SHARD_FORMAT).toBe(ShardFormat.TFRECORD);
    expect(DEFAULT_LABEL_MODE).toBe(RecordLabels.FOLDER);
  });

  test('records are images with labels, from folders or a label file, any bytes without', () => {
    expect(defaultRecordContent(undefined)).toBe(RecordContent.IMAGES);
    expect(defaultRecordContent('folder')).toBe(RecordContent.IMAGES);
    expect(defaultRecordContent('file')).toBe(RecordContent.IMAGES);
    expect(defaultRecordContent('none')).toBe(RecordContent.ANY);
  });

  test('isOneOf tells names from other values', () => {
    expect(isOneOf(LABEL_MODES, 'none')).toBe(true);
    expect(isOneOf(LABEL_MODES, 'None')).toBe(false);
    expect(isOneOf(LABEL_MODES, undefined)).toBe(false);
  });

  test('the target shard size defaults to 64 MiB, within the 1–128 MiB limits', () => {
    expect(DEFAULT_SHARD_BYTES).toBe(64 * 2 ** 20);
    expect(DEFAULT_SHARD_BYTES).toBeGreaterThanOrEqual(MIN_SHARD_BYTES);
    expect(DEFAULT_SHARD_BYTES).toBeLessThanOrEqual(MAX_SHARD_BYTES);
  });
});
