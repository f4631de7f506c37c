import { App, CfnParameter, Size, Stack, Token } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { readImagePreprocessing } from '../../lambda/handler-kit/dataset-settings';
import type { ImagePreprocessingOptions, ShardedDatasetProps } from '../../lib';
import { ShardedDataset } from '../../lib';

function synth(extra: Partial<ShardedDatasetProps>): { stack: Stack; dataset: ShardedDataset; template: Template } {
  const app = new App();
  const stack = new Stack(app, 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
  const dataset = new ShardedDataset(stack, 'Packing', { sourceBucket: new s3.Bucket(stack, 'Raw'), sourcePrefix: 'raw/', ...extra });
  return { stack, dataset, template: Template.fromStack(stack) };
}

function variablesOf(template: Template, handler: string): Record<string, unknown> {
  const functions = Object.values(template.findResources('AWS::Lambda::Function', {
    Properties: { Environment: { Variables: { POWERTOOLS_SERVICE_NAME: handler } } },
  })) as any[];
  expect(functions).toHaveLength(1);
  return functions[0].Properties.Environment.Variables;
}

function memoryOf(template: Template, handler: string): number {
  const functions = Object.values(template.findResources('AWS::Lambda::Function', {
    Properties: { Environment: { Variables: { POWERTOOLS_SERVICE_NAME: handler } } },
  })) as any[];
  return functions[0].Properties.MemorySize;
}

describe('ShardedDataset imagePreprocessing', () => {
  test('without it the handlers get no IMAGE_PREPROCESSING and the packer keeps 2 GiB and Node\'s thread pool', () => {
    // WHEN
    const { template, dataset } = synth({});
    // THEN
    for (const handler of ['shard-planner', 'shard-packer']) {
      expect(variablesOf(template, handler)).not.toHaveProperty('IMAGE_PREPROCESSING');
    }
    expect(variablesOf(template, 'shard-packer')).not.toHaveProperty('UV_THREADPOOL_SIZE');
    expect(memoryOf(template, 'shard-packer')).toBe(2048);
    expect(dataset.imagePreprocessing).toBeUndefined();
  });

  test('the planner and the packer get the settings as the JSON the handlers read, with the engine\'s field names', () => {
    // GIVEN
    const options: ImagePreprocessingOptions = { shorterSidePixels: 256, longerSidePixels: 512, jpegQuality: 85, keepGrayscale: true };
    // WHEN
    const { template, dataset } = synth({ imagePreprocessing: options });
    // THEN: what the construct renders is what the handlers' parser accepts
    for (const handler of ['shard-planner', 'shard-packer']) {
      const variable = variablesOf(template, handler).IMAGE_PREPROCESSING;
      expect(typeof variable).toBe('string');
      expect(readImagePreprocessing({ IMAGE_PREPROCESSING: variable as string }))
        .toEqual({ shorterSide: 256, longerSide: 512, jpegQuality: 85, keepGrayscale: true });
    }
    expect(variablesOf(template, 'shard-finalizer')).not.toHaveProperty('IMAGE_PREPROCESSING');
    expect(dataset.imagePreprocessing).toEqual(options);
  });

  test('only the settings given are rendered: the engine applies its own defaults', () => {
    const { template } = synth({ imagePreprocessing: { shorterSidePixels: 256 } });
    expect(variablesOf(template, 'shard-packer').IMAGE_PREPROCESSING).toBe('{"shorterSide":256}');
  });

  test('the packer gets two vCPUs (3,538 MiB) by default and a thread pool of at least one thread per vCPU', () => {
    // WHEN
    const { template } = synth({ imagePreprocessing: { shorterSidePixels: 256 } });
    // THEN: 3,538 MB is 2 × 1,769 MB, two vCPUs; Node's default pool of 4 already covers them
    expect(memoryOf(template, 'shard-packer')).toBe(3538);
    expect(memoryOf(template, 'shard-planner')).toBe(4096);
    expect(variablesOf(template, 'shard-packer').UV_THREADPOOL_SIZE).toBe('4');
  });

  test.each([
    [Size.mebibytes(10240), '6'],
    [Size.mebibytes(8846), '6'],
    [Size.mebibytes(7077), '5'],
    [Size.mebibytes(1024), '4'],
  ])('a packer of %s gets a thread pool of %s threads', (memory, threads) => {
    const { template } = synth({ imagePreprocessing: { shorterSidePixels: 256 }, packerMemorySize: memory });
    expect(memoryOf(template, 'shard-packer')).toBe(memory.toMebibytes());
    expect(variablesOf(template, 'shard-packer').UV_THREADPOOL_SIZE).toBe(threads);
  });

  test('a packer memory known only at deploy time leaves Node\'s thread pool as it is', () => {
    const app = new App();
    const stack = new Stack(app, 'Stack');
    const memory = new CfnParameter(stack, 'Memory', { type: 'Number' }).valueAsNumber;
    new ShardedDataset(stack, 'Packing', {
      sourceBucket: new s3.Bucket(stack, 'Raw'), imagePreprocessing: { shorterSidePixels: 256 }, packerMemorySize: Size.mebibytes(memory),
    });
    expect(variablesOf(Template.fromStack(stack), 'shard-packer')).not.toHaveProperty('UV_THREADPOOL_SIZE');
  });

  test('a deploy-time setting is rendered by CloudFormation into the JSON, and skips the synth-time checks', () => {
    // GIVEN
    const app = new App();
    const stack = new Stack(app, 'Stack');
    const side = new CfnParameter(stack, 'Side', { type: 'Number' }).valueAsNumber;
    // WHEN
    new ShardedDataset(stack, 'Packing', { sourceBucket: new s3.Bucket(stack, 'Raw'), imagePreprocessing: { shorterSidePixels: side, longerSidePixels: 1 } });
    // THEN
    const variable = variablesOf(Template.fromStack(stack), 'shard-packer').IMAGE_PREPROCESSING;
    expect(JSON.stringify(variable)).toContain('{"Ref":"Side"}');
    expect(Token.isUnresolved(side)).toBe(true);
  });

  describe('validation', () => {
    test.each<[string, ImagePreprocessingOptions, RegExp]>([
      ['a shorter side of 0', { shorterSidePixels: 0 }, /InvalidImageSide.*imagePreprocessing.shorterSidePixels must be a whole number between 1 and 16384, got 0/],
      ['a longer side above 16,384', { longerSidePixels: 16385 }, /InvalidImageSide.*imagePreprocessing.longerSidePixels must be a whole number between 1 and 16384, got 16385/],
      ['a fractional side', { shorterSidePixels: 255.5 }, /InvalidImageSide/],
      ['quality 0', { jpegQuality: 0 }, /InvalidJpegQuality.*imagePreprocessing.jpegQuality must be a whole number between 1 and 100, got 0/],
      ['quality 101', { jpegQuality: 101 }, /InvalidJpegQuality/],
      ['a longer side below the shorter', { shorterSidePixels: 512, longerSidePixels: 256 }, /LongerSideBelowShorterSide.*got 256 < 512/],
    ])('refuses %s', (_what, imagePreprocessing, message) => {
      expect(() => synth({ imagePreprocessing })).toThrow(message);
    });

    test.each<[string, ImagePreprocessingOptions]>([
      ['the smallest sides', { shorterSidePixels: 1, longerSidePixels: 1 }],
      ['the largest sides', { shorterSidePixels: 16384, longerSidePixels: 16384 }],
      ['quality 1', { jpegQuality: 1 }],
      ['quality 100', { jpegQuality: 100 }],
      ['no size: re-encoding only', {}],
    ])('accepts %s', (_what, imagePreprocessing) => {
      expect(() => synth({ imagePreprocessing })).not.toThrow();
    });
  });
});
