import * as fs from 'node:fs';
import * as path from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { packingSettingsOfFlags } from '../../bin/cli/pack';
import { planShards } from '../../lambda/packing/planning/plan-shards';
import { fromEnvironment } from '../../lib/contract/packing-settings';
import { ShardedDataset } from '../../lib';
import { seededBytes, temporaryFolders, writeFiles } from '../support/local-files';
import { runCli } from '../support/run-cli';
import { testApp } from '../support/stacks';

// The CLI and the construct decode a packing run's settings with the same codec
// (lib/contract/packing-settings.ts): the same request gives the same settings and the same shards.

const folder = temporaryFolders();

/** The handlers' environment of a ShardedDataset with these props. */
function constructEnvironment(props: { shardCount: number; consumers: number; seed: number }): { stack: Stack; environment: Record<string, string> } {
  const stack = new Stack(testApp(), 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
  new ShardedDataset(stack, 'Packing', { sourceBucket: new s3.Bucket(stack, 'Raw'), sourcePrefix: 'raw/', ...props });
  const functions = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function')) as any[];
  const environment = Object.assign({}, ...functions.map((fn) => fn.Properties.Environment?.Variables ?? {}));
  return { stack, environment };
}

describe('the CLI and the construct decode packing settings alike', () => {
  test('shardCount 10 with consumers 3: both pack 12 shards and say it was rounded up', async () => {
    // GIVEN: 24 files, enough for 12 shards
    const source = folder('src');
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 24; i++) files[`${i % 2 === 0 ? 'cat' : 'dog'}/${i}.bin`] = seededBytes(`parity/${i}`, 500 + 13 * i);
    writeFiles(source, files);
    const output = path.join(folder('out'), 'dataset');

    // WHEN: the CLI packs, and the planner plans from the construct's environment
    const packed = await runCli('pack', '--content', 'any', source, output, '--shards', '10', '--consumers', '3', '--seed', '4');
    const { stack, environment } = constructEnvironment({ shardCount: 10, consumers: 3, seed: 4 });
    const planned = planShards(Object.entries(files).map(([key, bytes]) => ({ key, size: bytes.length })), fromEnvironment(environment));

    // THEN
    expect(packed.code).toBe(0);
    const manifest = JSON.parse(fs.readFileSync(path.join(output, 'manifest.json'), 'utf8'));
    expect(manifest.shards).toHaveLength(12);
    expect(planned.shards).toHaveLength(12);
    expect(packed.stdout).toContain('--shards 10 is rounded up to 12, a multiple of the 3 consumers');
    Annotations.fromStack(stack).hasWarning('/Stack/Packing', Match.stringLikeRegexp('shardCount 10 is rounded up to 12, a multiple of the 3 consumers'));
  });

  test('construct → environment → fromEnvironment equals the CLI\'s settings for the same request (read from S3, as the packers do)', () => {
    // GIVEN
    const { environment } = constructEnvironment({ shardCount: 10, consumers: 3, seed: 4 });
    // WHEN
    const fromConstruct = fromEnvironment(environment);
    const fromCli = packingSettingsOfFlags({ shards: '10', consumers: '3', seed: '4' }, true);
    // THEN
    expect(fromConstruct).toEqual(fromCli);
  });
});
