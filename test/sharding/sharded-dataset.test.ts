import { AfterClaimError } from '../../lambda/packing/publish';
import { CfnParameter, Duration, Size, Stack, Token } from 'aws-cdk-lib';
import { Annotations, Capture, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { INDEX_CHANNEL_MANIFEST, MANIFEST_KEY, PLAN_ROOT, SHARDS_CHANNEL_MANIFEST } from '../../lambda/packing/dataset-layout';
import { SHARD_FINALIZER_ENVIRONMENT, SHARD_FINALIZER_EVENT_FIELDS } from '../../lambda/shard-finalizer/contract';
import { SHARD_PACKER_ENVIRONMENT, SHARD_PACKER_EVENT_FIELDS } from '../../lambda/shard-packer/contract';
import { SHARD_PLANNER_ENVIRONMENT, SHARD_PLANNER_RESULT_FIELDS, SHARD_TASK_FIELDS } from '../../lambda/shard-planner/contract';
import type { ShardedDatasetProps} from '../../lib';
import { IoPlanner, RecordLabels, ShardedDataset, ShardFormat, TrainingInstance } from '../../lib';
import { fromEnvironment, normalizePackingSettings } from '../../lib/contract/packing-settings';
import { testApp } from '../support/stacks';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const aslValidator = require('asl-validator') as (definition: unknown) => { isValid: boolean; errors: unknown[] };

interface Fixture {
  readonly stack: Stack;
  readonly source: s3.Bucket;
}

function fixture(): Fixture {
  const app = testApp();
  const stack = new Stack(app, 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
  return { stack, source: new s3.Bucket(stack, 'Raw') };
}

function dataset(extra: Partial<ShardedDatasetProps> = {}): { stack: Stack; dataset: ShardedDataset; template: Template } {
  const { stack, source } = fixture();
  const created = new ShardedDataset(stack, 'Packing', { sourceBucket: source, sourcePrefix: 'raw/', ...extra });
  return { stack, dataset: created, template: Template.fromStack(stack) };
}

/** The state machine's definition as Step Functions sees it, with ARNs and names as placeholders. */
function renderedDefinition(template: Template): any {
  const machine = Object.values(template.findResources('AWS::StepFunctions::StateMachine'))[0] as any;
  const join = machine.Properties.DefinitionString['Fn::Join'];
  const text = (join[1] as unknown[]).map((part) => (typeof part === 'string' ? part : 'arn:aws:lambda:us-east-1:111111111111:function:f')).join('');
  return JSON.parse(text);
}

function functionNamed(template: Template, handler: string): any {
  const functions = template.findResources('AWS::Lambda::Function', {
    Properties: { Environment: { Variables: { POWERTOOLS_SERVICE_NAME: handler } } },
  });
  const found = Object.values(functions);
  expect(found).toHaveLength(1);
  return found[0];
}

function payloadFields(parameters: Record<string, unknown>): string[] {
  return Object.keys(parameters).map((key) => key.replace(/\.\$$/, '')).sort();
}

describe('ShardedDataset', () => {
  test('creates a planner, a packer and a finalizer on nodejs22.x x86_64 from the bundles, traced, with their own log groups', () => {
    // GIVEN / WHEN
    const { template } = dataset({ packerMemorySize: Size.mebibytes(3008) });
    // THEN
    template.resourceCountIs('AWS::Lambda::Function', 3);
    template.allResourcesProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs22.x',
      Architectures: ['x86_64'],
      Handler: 'index.handler',
      Timeout: 900,
      TracingConfig: { Mode: 'Active' },
      LoggingConfig: { LogGroup: Match.anyValue() },
    });
    expect(functionNamed(template, 'shard-packer').Properties.MemorySize).toBe(3008);
    expect(functionNamed(template, 'shard-planner').Properties.MemorySize).toBe(4096);
    expect(functionNamed(template, 'shard-finalizer').Properties.MemorySize).toBe(1024);
  });

  test.each([
    ['shard-planner', SHARD_PLANNER_ENVIRONMENT],
    ['shard-packer', SHARD_PACKER_ENVIRONMENT],
    ['shard-finalizer', SHARD_FINALIZER_ENVIRONMENT],
  ])('%s gets the environment its contract reads', (handler, names) => {
    // GIVEN
    const { stack, source } = fixture();
    new ShardedDataset(stack, 'Packing', {
      sourceBucket: source, sourcePrefix: 'raw/', shardCount: 16, consumers: 8, seed: 7, labels: RecordLabels.NONE, format: ShardFormat.RECORDIO,
      sourceInventory: { bucket: new s3.Bucket(stack, 'Inventory'), prefix: 'inventory/raw/daily/' },
      imagePreprocessing: { shorterSidePixels: 256 },
      exclude: ['README.txt'],
    });
    const template = Template.fromStack(stack);
    // WHEN
    const variables = functionNamed(template, handler).Properties.Environment.Variables;
    const ours = Object.keys(variables).filter((name) => !name.startsWith('POWERTOOLS_'));
    // THEN
    // TARGET_SHARD_BYTES goes with no shardCount, LABEL_FILE with labels 'file' (test/sharding/sharded-dataset-label-file.test.ts).
    expect(ours.sort()).toEqual(names.filter((name) => name !== 'TARGET_SHARD_BYTES' && name !== 'LABEL_FILE').sort());
  });

  test('passes the options to the planner as the strings its settings parser reads', () => {
    const { template } = dataset({ targetShardSize: Size.mebibytes(32), consumers: 8, seed: 7, labels: RecordLabels.NONE });
    expect(functionNamed(template, 'shard-planner').Properties.Environment.Variables).toMatchObject({
      SOURCE_PREFIX: 'raw/',
      DESTINATION_PREFIX: 'packed/',
      SHARD_FORMAT: 'tfrecord',
      TARGET_SHARD_BYTES: String(32 * 1024 * 1024),
      CONSUMERS: '8',
      SHUFFLE_SEED: '7',
      RECORD_LABELS: 'none',
    });
  });

  describe('consumers from the training cluster', () => {
    test.each<[string, Partial<ShardedDatasetProps>, number]>([
      ['2 × ml.p3dn.24xlarge: 2 × 8 GPU processes × 11 sized workers', { cluster: { instance: TrainingInstance.P3DN_24XLARGE, instanceCount: 2 } }, 176],
      ['1 × ml.g5.2xlarge: 1 × 1 × 7', { cluster: { instance: TrainingInstance.G5_2XLARGE } }, 7],
      ['given workers and processes: 4 × 2 × 3', {
        cluster: { instance: TrainingInstance.G4DN_12XLARGE, instanceCount: 4, processesPerInstance: 2, loaderWorkers: 3 },
      }, 24],
      ['no cluster and no consumers', {}, 1],
      ['consumers as given', { consumers: 12 }, 12],
    ])('%s', (_what, extra, consumers) => {
      // WHEN
      const { template, dataset: created } = dataset(extra);

      // THEN the planner Lambda rounds the shard count to a multiple of them
      expect(created.consumers).toBe(consumers);
      expect(functionNamed(template, 'shard-planner').Properties.Environment.Variables.CONSUMERS).toBe(String(consumers));
    });

    test('takes the same consumers as the I/O planner', () => {
      // GIVEN
      const cluster = { instance: TrainingInstance.P4D_24XLARGE, instanceCount: 3 };

      // WHEN
      const { dataset: created } = dataset({ cluster });

      // THEN
      const plan = IoPlanner.plan({ dataset: { objectCount: 1_000_000, totalSize: Size.gibibytes(100) }, cluster });
      expect(created.consumers).toBe(plan.packing.consumers);
    });

    test('consumers and cluster together are rejected', () => {
      expect(() => dataset({ consumers: 8, cluster: { instance: TrainingInstance.G5_2XLARGE } }))
        .toThrow(/ConsumersAndCluster\] give consumers or cluster, not both/);
    });

    test.each<[string, Partial<ShardedDatasetProps>, RegExp]>([
      ['0 instances', { cluster: { instance: TrainingInstance.G5_2XLARGE, instanceCount: 0 } }, /InvalidInstanceCount\] cluster\.instanceCount .* got 0 \(at Stack\/Packing\)/],
      ['more processes than vCPUs', { cluster: { instance: TrainingInstance.G5_2XLARGE, processesPerInstance: 9 } }, /InvalidProcessesPerInstance/],
      ['a deploy-time instance count', { cluster: { instance: TrainingInstance.G5_2XLARGE, instanceCount: Token.asNumber({ Ref: 'N' }) } },
        /UnresolvedPlanInput\] cluster\.instanceCount must be known at synth time/],
    ])('a cluster with %s is rejected', (_what, extra, message) => {
      expect(() => dataset(extra)).toThrow(message);
    });
  });

  test('exposes the keys of the current version that match the engine\'s layout', () => {
    const { dataset: created } = dataset({ destinationPrefix: 'datasets/imagenet/' });
    expect(created.destinationPrefix).toBe('datasets/imagenet/');
    expect(created.manifestKey).toBe(`datasets/imagenet/${MANIFEST_KEY}`);
    expect(created.shardsManifestKey).toBe(`datasets/imagenet/${SHARDS_CHANNEL_MANIFEST}`);
    expect(created.indexManifestKey).toBe(`datasets/imagenet/${INDEX_CHANNEL_MANIFEST}`);
  });

  test.each([
    [Duration.hours(12), /InvalidVersionRetention.*versionRetention \(days\) must be a whole number between 0 and 3650, got 0.5/],
    [Duration.days(4000), /InvalidVersionRetention/],
  ])('a version retention of %s is refused', (versionRetention, message) => {
    expect(() => dataset({ versionRetention })).toThrow(message);
  });

  test('the planner is always told the effective target shard size (64 MiB unless given), and none with an exact count', () => {
    const plannerEnvironment = (extra: object) => {
      const functions = dataset(extra).template.findResources('AWS::Lambda::Function');
      return Object.values(functions).map((fn: any) => fn.Properties.Environment?.Variables ?? {}).find((vars: any) => 'CONSUMERS' in vars);
    };
    expect(plannerEnvironment({})).toMatchObject({ TARGET_SHARD_BYTES: String(64 * 1024 * 1024) });
    expect(plannerEnvironment({ targetShardSize: Size.mebibytes(16) })).toMatchObject({ TARGET_SHARD_BYTES: String(16 * 1024 * 1024) });
    expect(plannerEnvironment({ shardCount: 8 })).not.toHaveProperty('TARGET_SHARD_BYTES');
  });

  test('the finalizer is told the version retention in days (7 unless given)', () => {
    const finalizerEnvironment = (extra: object) => {
      const functions = dataset(extra).template.findResources('AWS::Lambda::Function');
      return Object.values(functions).map((fn: any) => fn.Properties.Environment?.Variables ?? {}).find((vars: any) => 'VERSION_RETENTION_DAYS' in vars);
    };
    expect(finalizerEnvironment({})).toMatchObject({ VERSION_RETENTION_DAYS: '7' });
    expect(finalizerEnvironment({ versionRetention: Duration.days(30) })).toMatchObject({ VERSION_RETENTION_DAYS: '30' });
  });

  test('an exact shard count that is not a multiple of the consumers is rounded up, and synth says so', () => {
    // GIVEN / WHEN
    const { stack } = dataset({ shardCount: 10, consumers: 3 });
    // THEN
    Annotations.fromStack(stack).hasWarning('/Stack/Packing', Match.stringLikeRegexp(
      'shardCount 10 is rounded up to 12, a multiple of the 3 consumers.*cdk-training-io:shardCountRounded'));
    Annotations.fromStack(dataset({ shardCount: 12, consumers: 3 }).stack).hasNoWarning('*', Match.stringLikeRegexp('shardCountRounded'));
  });

  test('the handlers decode from their environment the settings the construct was given', () => {
    // GIVEN
    const { template } = dataset({ shardCount: 10, consumers: 3, seed: 7, labels: RecordLabels.NONE, format: ShardFormat.RECORDIO,
      packerConcurrency: 16, versionRetention: Duration.days(30), allowMissing: true });
    const environment = (handler: string) => functionNamed(template, handler).Properties.Environment.Variables;
    // WHEN
    const decoded = fromEnvironment({ ...environment('shard-planner'), ...environment('shard-packer'), ...environment('shard-finalizer') });
    // THEN
    expect(decoded).toEqual({ format: 'recordio', seed: 7, labels: 'none', shardCount: 10, consumers: 3, readConcurrency: 16, retentionDays: 30, allowMissing: true });
    expect(fromEnvironment({ ...environment('shard-planner'), ...environment('shard-packer'), ...environment('shard-finalizer') }))
      .toEqual(normalizePackingSettings({ shardCount: 10, consumers: 3, seed: 7, labels: 'none', format: 'recordio', readConcurrency: 16, retentionDays: 30, allowMissing: true }));
  });

  test('parts reach the planner, sorted, and only when given; a part named twice is refused', () => {
    // GIVEN
    const planner = (extra: object) => functionNamed(dataset(extra).template, 'shard-planner').Properties.Environment.Variables;
    // THEN
    expect(planner({ parts: ['mask.png', 'jpg', 'json'] })).toMatchObject({ SAMPLE_PARTS: 'jpg,json,mask.png' });
    expect(planner({})).not.toHaveProperty('SAMPLE_PARTS');
    expect(fromEnvironment(planner({ parts: ['txt', 'jpg'] })).parts).toEqual(['jpg', 'txt']);
    expect(() => dataset({ parts: ['jpg', 'jpg'] })).toThrow(/InvalidParts.*parts must name one or more distinct parts/);
  });

  test('parts as a list token is refused at synth, naming the prop; a token for one name inside the list reaches the planner', () => {
    // GIVEN
    const withParameter = (parts: (stack: Stack) => string[]) => {
      const { stack, source } = fixture();
      new ShardedDataset(stack, 'Packing', { sourceBucket: source, sourcePrefix: 'raw/', parts: parts(stack) });
      return Template.fromStack(stack);
    };
    // THEN
    expect(() => withParameter((stack) => new CfnParameter(stack, 'Parts', { type: 'CommaDelimitedList' }).valueAsList))
      .toThrow(/InvalidParts.*parts must be a list of part names known at synth .*got a list token/);
    const template = withParameter((stack) => ['jpg', new CfnParameter(stack, 'Part', { type: 'String' }).valueAsString]);
    expect(JSON.stringify(functionNamed(template, 'shard-planner').Properties.Environment.Variables.SAMPLE_PARTS)).toContain('{"Ref":"Part"}');
  });

  test('the finalizer publishes no version with listed failures unless allowMissing', () => {
    const finalizerEnvironment = (extra: object) => {
      const functions = dataset(extra).template.findResources('AWS::Lambda::Function');
      return Object.values(functions).map((fn: any) => fn.Properties.Environment?.Variables ?? {}).find((vars: any) => 'VERSION_RETENTION_DAYS' in vars);
    };
    expect(finalizerEnvironment({})).toMatchObject({ ALLOW_MISSING: 'false' });
    expect(finalizerEnvironment({ allowMissing: false })).toMatchObject({ ALLOW_MISSING: 'false' });
    expect(finalizerEnvironment({ allowMissing: true })).toMatchObject({ ALLOW_MISSING: 'true' });
  });

  test('renders a state machine definition that passes the Amazon States Language validator', () => {
    const { template } = dataset();
    const result = aslValidator(renderedDefinition(template));
    expect(result.errors).toEqual([]);
    expect(result.isValid).toBe(true);
  });

  test('plans, skips packing when up to date, maps over the tasks in S3 with zero tolerated failures, then finalizes', () => {
    // GIVEN
    const { template } = dataset({ maxConcurrency: 250 });
    // WHEN
    const definition = renderedDefinition(template);
    // THEN
    expect(definition.States.Plan).toMatchObject({ ResultPath: '$.plan', Next: 'UpToDate' });
    expect(definition.States.UpToDate.Choices[0]).toMatchObject({ Variable: '$.plan.upToDate', BooleanEquals: true, Next: 'AlreadyPacked' });
    const map = definition.States.PackShards;
    expect(map).toMatchObject({
      Type: 'Map',
      MaxConcurrency: 250,
      ResultPath: null,
      ItemReader: { ReaderConfig: { InputType: 'JSON' }, Parameters: { 'Bucket.$': '$.plan.tasksBucket', 'Key.$': '$.plan.tasksKey' } },
      ItemProcessor: { ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' } },
      Next: 'Finalize',
    });
    // No tolerated failures: 0 is the ASL default, which aws-cdk-lib leaves out.
    expect(map.ToleratedFailurePercentage ?? 0).toBe(0);
    expect(map.ToleratedFailureCount ?? 0).toBe(0);
    expect(definition.States.Finalize.End).toBe(true);
  });

  test('retries packers with backoff on throttling and on failures', () => {
    const { template } = dataset();
    const retries = renderedDefinition(template).States.PackShards.ItemProcessor.States.PackShard.Retry;
    expect(retries).toEqual(expect.arrayContaining([
      expect.objectContaining({ ErrorEquals: ['Lambda.TooManyRequestsException'], BackoffRate: 2, JitterStrategy: 'FULL' }),
      expect.objectContaining({ ErrorEquals: ['States.TaskFailed', 'States.Timeout'], BackoffRate: 2, MaxAttempts: 3 }),
    ]));
  });

  test('retries the finalizer when it failed after its claim, so that the retry finishes the published version', () => {
    const { template } = dataset();
    const retries = renderedDefinition(template).States.Finalize.Retry;
    expect(retries).toEqual(expect.arrayContaining([
      expect.objectContaining({ ErrorEquals: ['AfterClaimError'], BackoffRate: 2, MaxAttempts: 3, JitterStrategy: 'FULL' }),
    ]));
    // The error's name, as Lambda reports it to Step Functions (errorType), is the class's.
    expect(new AfterClaimError('v00000001-0123abcd', true, 'pruning', new Error('x')).name).toBe('AfterClaimError');
  });

  test('the Lambda payloads and the paths read from $.plan match the handlers\' contracts', () => {
    // GIVEN
    const { template } = dataset();
    const definition = renderedDefinition(template);
    const map = definition.States.PackShards;
    // THEN: Map item → packer event
    expect(payloadFields(map.ItemSelector)).toEqual([...SHARD_PACKER_EVENT_FIELDS].sort());
    for (const [key, path] of Object.entries(map.ItemSelector)) {
      const field = key.replace(/\.\$$/, '');
      expect(path).toBe(`$$.Map.Item.Value.${field}`);
      expect(SHARD_TASK_FIELDS).toContain(field);
    }
    expect(payloadFields(map.ItemProcessor.States.PackShard.Parameters)).toEqual([...SHARD_PACKER_EVENT_FIELDS].sort());
    // finalizer event
    expect(payloadFields(definition.States.Finalize.Parameters)).toEqual([...SHARD_FINALIZER_EVENT_FIELDS].sort());
    // every `$.plan.<field>` the definition reads is a field of the planner's result
    const planFields = [...JSON.stringify(definition).matchAll(/\$\.plan\.([A-Za-z]+)/g)].map((m) => m[1]);
    expect(planFields.length).toBeGreaterThan(0);
    for (const field of planFields) expect(SHARD_PLANNER_RESULT_FIELDS).toContain(field);
  });

  test('logs every state and traces the state machine', () => {
    const { template } = dataset();
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { Level: 'ALL' },
    });
  });

  test('grants the state machine s3:GetObject on the task list only', () => {
    // GIVEN
    const { template } = dataset();
    const statements = new Capture();
    // WHEN
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyName: Match.stringLikeRegexp('StateMachineRoleDefaultPolicy'),
      PolicyDocument: { Statement: statements },
    });
    // THEN
    const s3Statements = (statements.asArray() as any[]).filter((s) => JSON.stringify(s.Action).includes('s3:'));
    expect(s3Statements).toHaveLength(1);
    expect(s3Statements[0].Action).toBe('s3:GetObject');
    expect(JSON.stringify(s3Statements[0].Resource)).toContain(`/packed/${PLAN_ROOT}*/tasks.json`);
  });

  test('scopes the functions\' S3 access to the source and destination prefixes', () => {
    // GIVEN
    const { template } = dataset();
    const policies = template.findResources('AWS::IAM::Policy');
    // WHEN
    const objectResources = Object.values(policies)
      .flatMap((policy: any) => policy.Properties.PolicyDocument.Statement)
      .filter((statement: any) => JSON.stringify(statement.Action).includes('s3:'))
      .flatMap((statement: any) => (Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource]))
      .map((resource: unknown) => JSON.stringify(resource))
      .filter((resource: string) => resource.includes('/'));
    // THEN
    expect(objectResources.length).toBeGreaterThan(0);
    for (const resource of objectResources) expect(resource).toMatch(/\/(raw|packed)\/(\*|_plan\/\*\/tasks\.json)"/);
  });

  test('grants the functions s3:DeleteObject (never DeleteObject*, which deletes versions for good) on the destination prefix only, and ListBucket unconditioned (a missing key must answer 404, not 403)', () => {
    // GIVEN
    const { template } = dataset();
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .flatMap((policy: any) => policy.Properties.PolicyDocument.Statement)
      .filter((statement: any) => JSON.stringify(statement.Action).includes('s3:'));
    const actionsOf = (statement: any): string[] => (Array.isArray(statement.Action) ? statement.Action : [statement.Action]);

    // THEN: every S3 action is one the handlers call, named exactly
    const actions = [...new Set(statements.flatMap(actionsOf))].sort();
    expect(actions).toEqual(['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:PutObject']);
    // deleting, on the destination prefix's objects only
    const deleting = statements.filter((statement: any) => actionsOf(statement).includes('s3:DeleteObject'));
    expect(deleting.length).toBeGreaterThan(0);
    for (const statement of deleting) expect(JSON.stringify(statement.Resource)).toMatch(/^\{"Fn::Join":\["",\[\{"Fn::GetAtt":\["PackingDestination\w+","Arn"\]\},"\/packed\/\*"\]\]\}$/);
    // listing, on the buckets, without an s3:prefix condition: GetObject and HeadObject carry no s3:prefix, so
    // a conditioned grant would make S3 answer a missing manifest, claim or result 403 instead of 404
    const listing = statements.filter((statement: any) => actionsOf(statement).includes('s3:ListBucket'));
    expect(listing.length).toBeGreaterThan(0);
    for (const statement of listing) {
      expect(actionsOf(statement)).toEqual(['s3:ListBucket']);
      expect(statement.Condition).toBeUndefined();
      expect(JSON.stringify(statement.Resource)).toMatch(/^\{"Fn::GetAtt":\["(Raw|PackingDestination)\w+","Arn"\]\}$/);
    }
  });

  test.each([
    ['the report folder', 'inventory/raw/daily/', 'inventory/raw/daily/'],
    ['one manifest', 'inventory/raw/daily/2026-11-20T00-00Z/manifest.json', 'inventory/raw/daily/'],
  ])('with an S3 Inventory report (%s) the planner gets its location and read on the report\'s folder only', (_case, prefix, folder) => {
    // GIVEN
    const { stack, source } = fixture();
    const inventory = new s3.Bucket(stack, 'Inventory');
    // WHEN
    new ShardedDataset(stack, 'Packing', { sourceBucket: source, sourcePrefix: 'raw/', sourceInventory: { bucket: inventory, prefix } });
    const template = Template.fromStack(stack);
    // THEN
    const planner = functionNamed(template, 'shard-planner');
    expect(planner.Properties.Environment.Variables).toMatchObject({ INVENTORY_BUCKET: { Ref: expect.stringMatching(/^Inventory/) }, INVENTORY_KEY: prefix });
    const inventoryResources = Object.values(template.findResources('AWS::IAM::Policy'))
      .flatMap((policy: any) => policy.Properties.PolicyDocument.Statement)
      .flatMap((statement: any) => (Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource]))
      .map((resource: unknown) => JSON.stringify(resource))
      .filter((resource: string) => resource.includes('Inventory'));
    expect(inventoryResources.filter((resource) => resource.includes('/'))).toEqual([expect.stringContaining(`/${folder}*`)]);
    expect(functionNamed(template, 'shard-packer').Properties.Environment.Variables.INVENTORY_BUCKET).toBeUndefined();
  });

  test('the default destination bucket is encrypted, SSL only, private and aborts incomplete multipart uploads', () => {
    const { template } = dataset();
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } })]) },
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  test('encrypts the default bucket with the given key and grants the functions its use', () => {
    const { stack, source } = fixture();
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    new ShardedDataset(stack, 'Packing', { sourceBucket: source, encryptionKey: key });
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms' } }] },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyName: Match.stringLikeRegexp('PackerServiceRole'),
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: Match.arrayWith(['kms:Decrypt']) })]) },
    });
  });

  test('passes cdk-nag AwsSolutions with every accepted finding acknowledged', () => {
    const { stack } = dataset();
    const report = new AwsSolutionsChecks(stack).validateScope(stack.node.root);
    // The test's own source bucket (Stack/Raw) is the user's: only the construct's findings count.
    const findings = report.violations.flatMap((v) => v.violatingResources
      .filter((r) => r.constructPath?.startsWith('Stack/Packing'))
      .map((r) => `${v.ruleName} at ${r.constructPath}`));
    expect(findings).toEqual([]);
    Annotations.fromStack(stack).hasNoError('*', Match.anyValue());
  });

  describe('governed accounts', () => {
    test('by default: log groups kept a year, a versioned destination bucket that sends its events to EventBridge', () => {
      const { template } = dataset();
      template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 365 });
      template.resourceCountIs('AWS::Logs::LogGroup', 4);
      template.hasResourceProperties('AWS::S3::Bucket', {
        VersioningConfiguration: { Status: 'Enabled' },
        NotificationConfiguration: { EventBridgeConfiguration: { EventBridgeEnabled: true } },
        LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ NoncurrentVersionExpiration: { NoncurrentDays: 30 } })]) },
      });
      // EventBridge is set on the bucket itself: no notification custom resource (a Lambda outside any VPC)
      template.resourceCountIs('Custom::S3BucketNotifications', 0);
      template.resourceCountIs('AWS::Lambda::Function', 3);
    });

    test('puts the planner, packers and finalizer in the VPC\'s subnets, with their own security group', () => {
      // GIVEN
      const { stack, source } = fixture();
      const vpc = new ec2.Vpc(stack, 'Vpc', {
        natGateways: 0, subnetConfiguration: [{ name: 'functions', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
      });
      // WHEN
      new ShardedDataset(stack, 'Packing', { sourceBucket: source, vpc, vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED } });
      // THEN
      const template = Template.fromStack(stack);
      const subnetIds = vpc.isolatedSubnets.map((s) => stack.resolve(s.subnetId));
      template.allResourcesProperties('AWS::Lambda::Function', {
        VpcConfig: { SubnetIds: subnetIds, SecurityGroupIds: [Match.anyValue()] },
      });
      const report = new AwsSolutionsChecks(stack).validateScope(stack.node.root);
      const findings = report.violations.flatMap((v) => v.violatingResources
        .filter((r) => r.constructPath?.startsWith('Stack/Packing')).map((r) => `${v.ruleName} at ${r.constructPath}`));
      expect(findings).toEqual([]);
    });

    test('encrypts its log groups with encryptionKey, keeps them logRetention, logs bucket access to accessLogsBucket', () => {
      // GIVEN
      const { stack, source } = fixture();
      const key = new kms.Key(stack, 'Key');
      const accessLogs = s3.Bucket.fromBucketName(stack, 'AccessLogs', 'my-access-logs');
      // WHEN
      new ShardedDataset(stack, 'Packing', {
        sourceBucket: source, encryptionKey: key, accessLogsBucket: accessLogs, logRetention: logs.RetentionDays.FIVE_YEARS,
      });
      // THEN
      const template = Template.fromStack(stack);
      template.allResourcesProperties('AWS::Logs::LogGroup', {
        RetentionInDays: 1827,
        KmsKeyId: { 'Fn::GetAtt': [stack.getLogicalId(key.node.defaultChild as kms.CfnKey), 'Arn'] },
      });
      template.hasResourceProperties('AWS::S3::Bucket', {
        LoggingConfiguration: { DestinationBucketName: 'my-access-logs', LogFilePrefix: 'Stack/Packing/Destination/' },
        BucketEncryption: { ServerSideEncryptionConfiguration: [Match.objectLike({ ServerSideEncryptionByDefault: Match.objectLike({ SSEAlgorithm: 'aws:kms' }) })] },
      });
    });
  });

  describe('validation', () => {
    test.each([0.5, 129, 1024])('targetShardSize of %s MiB is rejected', (mib) => {
      expect(() => dataset({ targetShardSize: Size.kibibytes(mib * 1024) })).toThrow(/InvalidShardSize.*targetShardSize must be a whole number of bytes between 1 MiB \(1048576\) and 128 MiB \(134217728\)/);
    });

    test.each([1, 64, 128])('targetShardSize of %s MiB is accepted', (mib) => {
      expect(() => dataset({ targetShardSize: Size.mebibytes(mib) })).not.toThrow();
    });

    test.each([0, -1, 1.5])('shardCount %s is rejected', (shardCount) => {
      expect(() => dataset({ shardCount })).toThrow(/InvalidShardCount.*shardCount must be a whole number ≥ 1, got/);
    });

    test.each([0, 2.5])('consumers %s is rejected', (consumers) => {
      expect(() => dataset({ consumers })).toThrow(/InvalidConsumers/);
    });

    test('targetShardSize and shardCount together are rejected', () => {
      expect(() => dataset({ targetShardSize: Size.mebibytes(64), shardCount: 8 })).toThrow(/ShardSizeAndCount/);
    });

    test.each([-1, 2 ** 53])('seed %s is rejected', (seed) => {
      expect(() => dataset({ seed })).toThrow(/InvalidSeed/);
    });

    test.each([0, 1025])('packerConcurrency %s is rejected', (packerConcurrency) => {
      expect(() => dataset({ packerConcurrency })).toThrow(/InvalidPackerConcurrency/);
    });

    test.each([0, 10001])('maxConcurrency %s is rejected', (maxConcurrency) => {
      expect(() => dataset({ maxConcurrency })).toThrow(/InvalidMaxConcurrency/);
    });

    test.each([Size.mebibytes(64), Size.gibibytes(11)])('packerMemorySize %s is rejected', (packerMemorySize) => {
      expect(() => dataset({ packerMemorySize })).toThrow(/InvalidMemorySize.*packerMemorySize/);
    });

    test('plannerMemorySize out of range is rejected', () => {
      expect(() => dataset({ plannerMemorySize: Size.gibibytes(16) })).toThrow(/InvalidMemorySize.*plannerMemorySize/);
    });

    test.each([
      ['sourcePrefix', 'raw'],
      ['sourcePrefix', '/raw/'],
      ['destinationPrefix', 'packed'],
      ['destinationPrefix', 'a//b/'],
    ])('%s %p is rejected', (name, prefix) => {
      expect(() => dataset({ [name]: prefix })).toThrow(new RegExp(`InvalidPrefix.*${name}`));
    });

    test.each(['inventory/raw/daily', '/inventory/', 'inventory/raw/daily/manifest.csv'])('sourceInventory.prefix %p is rejected', (prefix) => {
      const { stack, source } = fixture();
      expect(() => new ShardedDataset(stack, 'Packing', { sourceBucket: source, sourceInventory: { bucket: source, prefix } }))
        .toThrow(/InvalidInventoryPrefix.*sourceInventory.prefix must be the report's folder ending in '\/'/);
    });

    test('a destination inside the source prefix of the same bucket is rejected', () => {
      const { stack, source } = fixture();
      expect(() => new ShardedDataset(stack, 'Packing', {
        sourceBucket: source, sourcePrefix: 'raw/', destinationBucket: source, destinationPrefix: 'raw/packed/',
      })).toThrow(/DestinationInsideSource/);
    });

    test('the same bucket with separate prefixes is accepted', () => {
      const { stack, source } = fixture();
      expect(() => new ShardedDataset(stack, 'Packing', {
        sourceBucket: source, sourcePrefix: 'raw/', destinationBucket: source, destinationPrefix: 'packed/',
      })).not.toThrow();
    });

    test('tokens are not checked at synth time', () => {
      // GIVEN
      const { stack, source } = fixture();
      const number = new CfnParameter(stack, 'Number', { type: 'Number' }).valueAsNumber;
      const prefix = new CfnParameter(stack, 'Prefix').valueAsString;
      const other = new CfnParameter(stack, 'Other').valueAsString;
      // WHEN / THEN
      expect(() => new ShardedDataset(stack, 'Packing', {
        sourceBucket: source,
        shardCount: number,
        consumers: number,
        seed: number,
        packerConcurrency: number,
        maxConcurrency: number,
        packerMemorySize: Size.mebibytes(number),
        sourcePrefix: prefix,
        destinationPrefix: other,
        sourceInventory: { bucket: source, prefix: other },
      })).not.toThrow();
      expect(() => new ShardedDataset(stack, 'BySize', { sourceBucket: source, targetShardSize: Size.bytes(number) })).not.toThrow();
      expect(() => Template.fromStack(stack)).not.toThrow();
    });
  });
});
