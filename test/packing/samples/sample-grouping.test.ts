import { decodeExample, readTfRecords, shardFormat } from '../../../lambda/packing/formats';
import { parseMembers, serializeMembers } from '../../../lambda/packing/members';
import { fromShardMessage, toShardMessage } from '../../../lambda/packing/parallel/shard-message';
import { PlanError } from '../../../lambda/packing/planning/plan-error';
import { planShards } from '../../../lambda/packing/planning/plan-shards';
import type { PlannedRecord } from '../../../lambda/packing/planning/plan-types';
import { checkSampleSettings, groupSamples, formsMultiPartSamples } from '../../../lambda/packing/samples/sample-grouping';
import { partProblem } from '../../../lambda/packing/samples/sample-records';
import { SAMPLE_PARTS } from '../../support/multi-part-samples';
import { parseTfExample } from '../../support/tf-example-parser';

const file = (key: string, size = 10, modified = 1) => ({ key, size, modified });

describe('grouping a listing into multi-part samples', () => {
  test('a listing whose every sample has one file is not multi-part: each file stays its own record', () => {
    expect(groupSamples([file('cat/1.jpg'), file('cat/2.jpg'), file('dog/1.jpg'), file('README')])).toBeUndefined();
  });

  test('files that share a key up to the first dot form one sample, its size the sum and its parts sorted', () => {
    // WHEN
    const grouping = groupSamples([file('a/1.mask.png', 5, 9), file('a/1.jpg', 7, 3), file('a/1.json', 2, 4), file('a/2.jpg'), file('a/2.json'), file('a/2.mask.png')])!;
    // THEN
    expect(grouping.samples[0]).toEqual({
      key: 'a/1', size: 14, modified: 9, imagePart: 'jpg',
      parts: [{ name: 'jpg', size: 7 }, { name: 'json', size: 2 }, { name: 'mask.png', size: 5 }],
    });
    expect(grouping.description).toEqual({
      parts: [{ name: 'jpg', kind: 'image' }, { name: 'json', kind: 'json' }, { name: 'mask.png', kind: 'image' }],
      required: ['jpg', 'json', 'mask.png'], imagePart: 'jpg', samples: 2,
    });
    expect(grouping.failures).toEqual([]);
  });

  test('a sample missing a part is a failure naming what it lacks and what it has; a file without a part name too', () => {
    // WHEN
    const grouping = groupSamples([file('s/1.jpg'), file('s/1.txt'), file('s/2.jpg'), file('s/3.txt'), file('s/3'), file('s/4')])!;
    // THEN
    expect(grouping.samples.map((sample) => sample.key)).toEqual(['s/1']);
    expect(grouping.failures.map((failure) => failure.key)).toEqual(['s/2', 's/3', 's/4']);
    expect(grouping.failures[0].reason).toMatch(/^sample lacks part 'txt' \(required: jpg, txt; it has s\/2\.jpg\): add the file/);
    expect(grouping.failures[1].reason).toMatch(/^no part name \(no dot in the file name\)/);
    expect(grouping.description.samples).toBe(4);
  });

  test('required parts: an optional part present is kept, a required one absent fails, and a one-part listing is multi-part when parts are asked for', () => {
    // WHEN
    const grouping = groupSamples([file('s/1.jpg'), file('s/1.json'), file('s/1.txt'), file('s/2.jpg'), file('s/2.json')], ['json', 'jpg'])!;
    const single = groupSamples([file('s/1.jpg'), file('s/2.jpg'), file('s/3.json')], ['jpg'])!;
    // THEN
    expect(grouping.samples.map((sample) => sample.parts.map((part) => part.name))).toEqual([['jpg', 'json', 'txt'], ['jpg', 'json']]);
    expect(grouping.description.required).toEqual(['jpg', 'json']);
    expect(grouping.description.parts.map((part) => part.name)).toEqual(['jpg', 'json', 'txt']);
    expect(single.samples.map((sample) => sample.key)).toEqual(['s/1', 's/2']);
    expect(single.failures.map((failure) => failure.key)).toEqual(['s/3']);
  });

  test('without an image among the required parts no part is the image part', () => {
    const grouping = groupSamples([file('s/1.json'), file('s/1.txt')])!;
    expect(grouping.description).not.toHaveProperty('imagePart');
    expect(grouping.samples[0]).not.toHaveProperty('imagePart');
  });

  test('RecordIO and preprocessing refuse multi-part samples, naming what works', () => {
    const grouping = groupSamples([file('s/1.jpg'), file('s/1.json')])!;
    expect(() => checkSampleSettings(grouping, { format: 'recordio' })).toThrow(/s\/1: a sample of 2 parts \(jpg, json\) cannot be a RecordIO record.*format: tfrecord, --format tfrecord/);
    expect(() => checkSampleSettings(grouping, { format: 'tfrecord', preprocessing: {} })).toThrow(/cannot be used with multi-part samples/);
    expect(() => checkSampleSettings(grouping, { format: 'tfrecord' })).not.toThrow();
  });

  test('a listing in key order is told multi-part by neighbouring files of one sample, by the same half-or-more rule', () => {
    expect(formsMultiPartSamples([file('a/1.jpg'), file('a/1.json')])).toBe(true);
    expect(formsMultiPartSamples([file('a/1.jpg'), file('a/2.jpg'), file('b/1.jpg')])).toBe(false);
    expect(formsMultiPartSamples([file('a/1.jpg'), file('a/1.png'), file('a/2.jpg'), file('a/3.jpg')])).toBe(false);
    expect(formsMultiPartSamples([file('a/1.jpg'), file('a/1.json'), file('a/1.txt'), file('a/2.jpg')])).toBe(true);
  });

  test('a stray pair in a one-file-per-sample set does not group it: fewer than half the samples have several files', () => {
    // x.jpg beside x.png, n0123.jpg.bak beside n0123.jpg: grouping would fail every other file as lacking the stray part.
    expect(groupSamples([file('cat/1.jpg'), file('cat/1.png'), file('cat/2.jpg'), file('cat/3.jpg'), file('dog/n0123.jpg'),
      file('dog/n0123.jpg.bak'), file('dog/4.jpg')])).toBeUndefined();
    // Half or more multi-part: grouped, and the incomplete one is a failure.
    const grouping = groupSamples([file('s/1.jpg'), file('s/1.json'), file('s/2.jpg')])!;
    expect(grouping.failures.map((failure) => failure.key)).toEqual(['s/2']);
  });

  test('no complete sample: the error counts what the samples lack and names the first, instead of an empty plan', () => {
    const listing = [file('s/1.jpg'), file('s/1.json'), file('s/2.jpg'), file('s/2.json'), file('s/3.jpg'), file('s/3')];
    expect(() => groupSamples(listing, ['jpg', 'json', 'txt'])).toThrow(
      /^no sample is complete: all 3 samples are failures \(2 lack part 'txt', 1 have no part name; required: jpg, json, txt\), so there is nothing to pack; .*The first: s\/1: sample lacks part 'txt'/,
    );
    expect(() => groupSamples(listing, ['jpg', 'json', 'txt'])).toThrow(PlanError);
    // Nothing listed (every file left out, or none labelled): no samples and no failures, the planner's "no files" to say.
    expect(groupSamples([], ['jpg', 'json'])!.samples).toEqual([]);
  });
});

describe('a multi-part sample through plan, member list, worker message and record', () => {
  const grouping = groupSamples([file('c/1.jpg', SAMPLE_PARTS.jpg.length), file('c/1.json', 12), file('d/2.jpg', SAMPLE_PARTS.jpg.length), file('d/2.json', 12)])!;
  const format = shardFormat('tfrecord');
  const plan = planShards(grouping.samples, { seed: 1, labels: 'folder', recordBytes: format.recordBytes.bind(format) });

  test('the plan keeps each sample whole in one record, with its parts and image part', () => {
    const records = plan.shards.flatMap((shard) => shard.records);
    expect(records.map((record) => [record.key, record.parts?.map((part) => part.name), record.imagePart]).sort())
      .toEqual([['c/1', ['jpg', 'json'], 'jpg'], ['d/2', ['jpg', 'json'], 'jpg']]);
    expect(plan.labelMap).toEqual({ c: 0, d: 1 });
  });

  test('member lists and worker messages carry the parts; one-file members stay five long', () => {
    const shard = plan.shards[0];
    expect(parseMembers('m.jsonl', serializeMembers(shard.records))).toEqual(shard.records.map((record) => ({ ...record, modified: record.modified ?? 0 })));
    expect(fromShardMessage(toShardMessage(shard))).toEqual(shard);
    const plain: PlannedRecord = { key: 'c/1.jpg', size: 3, label: 0, recordId: 0, modified: 1 };
    expect(JSON.parse(serializeMembers([plain]).toString())).toHaveLength(5);
    expect(() => parseMembers('m.jsonl', Buffer.from('["c/1", 3, 0, 0, 1, [["jpg", 3]], "png"]\n'))).toThrow(/m\.jsonl line 1: expected/);
  });

  test('the record holds every part, read back alike by the packer\'s decoder and protobufjs, within the planned bound', () => {
    // GIVEN
    const record = plan.shards.flatMap((shard) => shard.records).find((r) => r.key === 'd/2')!;
    const json = Buffer.from('{"a": [1, 2]}');
    // WHEN
    const encoded = format.encode({ data: Buffer.alloc(0), key: record.key, label: record.label, recordId: record.recordId, imagePart: 'jpg',
      parts: [{ name: 'jpg', data: SAMPLE_PARTS.jpg }, { name: 'json', data: json }] });
    const bytes = Buffer.alloc(encoded.size);
    encoded.writeTo(bytes, 0);
    const [framed] = [...readTfRecords(bytes)];
    // THEN
    expect(encoded.size).toBeLessThanOrEqual(format.recordBytes(record.key, SAMPLE_PARTS.jpg.length + json.length, [{ name: 'jpg', size: SAMPLE_PARTS.jpg.length }, { name: 'json', size: json.length }]));
    const ours = decodeExample(framed.payload);
    const theirs = parseTfExample(framed.payload);
    expect(Object.keys(theirs).sort()).toEqual(Object.keys(ours).sort());
    expect(Object.keys(theirs).sort()).toEqual(['image/class/label', 'image/encoded', 'image/filename', 'image/format', 'json', 'sample/key']);
    expect(Buffer.from(theirs.json.bytesList!.value[0]).equals(json)).toBe(true);
    expect(Buffer.from(theirs['image/filename'].bytesList!.value[0]).toString()).toBe('d/2.jpg');
    expect(Number(theirs['image/class/label'].int64List!.value[0])).toBe(1);
  });

  test('parts are checked by kind: images decode, JSON parses, text and bytes pass', () => {
    expect(partProblem('jpg', SAMPLE_PARTS.jpg, 'x.jpg')).toBeUndefined();
    expect(partProblem('mask.png', Buffer.from('nope'), 'x.mask.png')).toBe('not an image (no image format recognised in its bytes)');
    expect(partProblem('json', Buffer.from('{"a": 1}'), 'x.json')).toBeUndefined();
    expect(partProblem('json', Buffer.from('{"a": '), 'x.json')).toMatch(/^not valid JSON \(/);
    expect(partProblem('json', Buffer.from('['.repeat(200)), 'x.json')).toMatch(/^not valid JSON \(JSON nested more than/);
    expect(partProblem('txt', Buffer.from([0xff]), 'x.txt')).toBeUndefined();
  });
});
