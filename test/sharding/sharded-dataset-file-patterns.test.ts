import { App, Lazy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import picomatch from 'picomatch';
import { readFilePatterns } from '../../lambda/handler-kit/dataset-settings';
import { filePatternProblem } from '../../lib/contract/file-patterns';
import { FilteredSource } from '../../lambda/packing/listing/filtered-source';
import type { ListedFile, PackingSource } from '../../lambda/io/storage';
import { listAll } from '../../lambda/io/storage';
import { SHARD_PLANNER_ENVIRONMENT } from '../../lambda/shard-planner/contract';
import type { ShardedDatasetProps } from '../../lib';
import { ShardedDataset } from '../../lib';

function plannerVariables(extra: Partial<ShardedDatasetProps>): Record<string, unknown> {
  const stack = new Stack(new App(), 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
  new ShardedDataset(stack, 'Packing', { sourceBucket: new s3.Bucket(stack, 'Raw'), sourcePrefix: 'raw/', ...extra });
  const planners = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function', {
    Properties: { Environment: { Variables: { POWERTOOLS_SERVICE_NAME: 'shard-planner' } } },
  })) as any[];
  expect(planners).toHaveLength(1);
  return planners[0].Properties.Environment.Variables;
}

/** A source of the given keys (reads are not needed: only the listing is filtered). */
function sourceOf(keys: string[]): PackingSource {
  return {
    uri: 'file:///test/',
    async *list() {
      yield keys.slice(0, 2).map((key): ListedFile => ({ key, size: 1, modified: 0 }));
      yield keys.slice(2).map((key): ListedFile => ({ key, size: 1, modified: 0 }));
    },
    read: () => Promise.reject(new Error('not read')),
  };
}

describe('ShardedDataset include and exclude', () => {
  test('are rendered on the planner as SOURCE_FILE_PATTERNS, which the planner reads back as given', () => {
    // WHEN
    const variables = plannerVariables({ include: ['cat/**', 'dog/**'], exclude: ['README.txt'] });

    // THEN
    expect(SHARD_PLANNER_ENVIRONMENT).toContain('SOURCE_FILE_PATTERNS');
    expect(JSON.parse(variables.SOURCE_FILE_PATTERNS as string)).toEqual({ include: ['cat/**', 'dog/**'], exclude: ['README.txt'] });
    expect(readFilePatterns(variables as Record<string, string>)).toEqual({ include: ['cat/**', 'dog/**'], exclude: ['README.txt'] });
  });

  test('without them (or with empty lists) the variable is absent and every file is packed', () => {
    expect(plannerVariables({}).SOURCE_FILE_PATTERNS).toBeUndefined();
    expect(plannerVariables({ include: [], exclude: [] }).SOURCE_FILE_PATTERNS).toBeUndefined();
    expect(readFilePatterns({})).toEqual({});
  });

  test.each([
    [{ exclude: ['/README.txt'] }, /InvalidFilePattern.*exclude must be relative to the source root \(no leading '\/'\), got '\/README\.txt'/],
    [{ include: ['cat/**', 'dog/[ab'] }, /InvalidFilePattern.*include\[1\] is not a valid glob, got 'dog\/\[ab'/],
    [{ include: ['!cat/**'] }, /InvalidFilePattern.*include must not start with '!'/],
    [{ exclude: ['cat/../dog/*'] }, /InvalidFilePattern.*exclude must not contain '\.' or '\.\.' folders/],
    [{ exclude: [''] }, /InvalidFilePattern.*exclude must be 1-1024 characters/],
    [{ exclude: ['cat\\x.jpg'] }, /InvalidFilePattern.*exclude must use '\/' between folders/],
  ])('%j fails at synth time naming the prop, the value and what is allowed', (props, message) => {
    expect(() => plannerVariables(props)).toThrow(message);
  });

  test('a pattern that is a token is not checked at synth time, and is rendered', () => {
    // GIVEN
    const pattern = Lazy.string({ produce: () => 'README.txt' });

    // WHEN
    const variables = plannerVariables({ exclude: [pattern] });

    // THEN
    expect(JSON.stringify(variables.SOURCE_FILE_PATTERNS)).toContain('README.txt');
  });

  test.each([
    ['not json', /SOURCE_FILE_PATTERNS must be a JSON object/],
    ['["README.txt"]', /SOURCE_FILE_PATTERNS must be a JSON object/],
    ['{"exclude": "README.txt"}', /SOURCE_FILE_PATTERNS field exclude must be an array of strings/],
    ['{"skip": ["a"]}', /SOURCE_FILE_PATTERNS has unknown field\(s\) skip; allowed: include, exclude/],
    ['{"include": ["/abs"]}', /SOURCE_FILE_PATTERNS field include must be relative to the source root/],
  ])('the planner refuses SOURCE_FILE_PATTERNS %j naming the variable', (value, message) => {
    expect(() => readFilePatterns({ SOURCE_FILE_PATTERNS: value })).toThrow(message);
  });
});

describe('the contract\'s glob check', () => {
  test.each([
    'a]', 'a}', 'a)', 'a(b', '[a{]', '{a,[b]}', 'a/[]]', '+(a|b)', '[{]', '{[}]', 'cat/[ab', '{cat,dog/**', '[!]]', '@(a|b', 'x/{a,{b,c}}', '*.{jpg,png}',
  ])('%j: refused by the contract exactly when picomatch (strictBrackets, as the engine compiles) refuses it', (pattern) => {
    // WHEN
    let compiles = true;
    try {
      picomatch.makeRe(pattern, { dot: true, strictBrackets: true });
    } catch {
      compiles = false;
    }
    // THEN
    expect(filePatternProblem('include', pattern) === undefined).toBe(compiles);
  });
});

describe('FilteredSource', () => {
  test('lists the included files less the excluded ones, in every batch, and counts the rest', async () => {
    // GIVEN
    const source = new FilteredSource(sourceOf(['README.txt', 'cat/1.jpg', 'cat/.DS_Store', 'cat/notes.txt', 'dog/2.jpg', 'eel/3.jpg']),
      { include: ['cat/**', 'dog/**'], exclude: ['**/*.txt', '**/.DS_Store'] });

    // WHEN
    const listed = await listAll(source);

    // THEN
    expect(listed.map((file) => file.key)).toEqual(['cat/1.jpg', 'dog/2.jpg']);
    expect(source.excludedFiles).toBe(4);
    expect(source.uri).toBe('file:///test/');
  });

  test('counts afresh on each listing', async () => {
    // GIVEN
    const source = new FilteredSource(sourceOf(['README.txt', 'cat/1.jpg']), { exclude: ['README.txt'] });

    // WHEN
    await listAll(source);
    await listAll(source);

    // THEN
    expect(source.excludedFiles).toBe(1);
  });
});
