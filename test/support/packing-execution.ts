import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { S3Sink } from '../../lambda/io/s3-sink';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import type { Manifest } from '../../lambda/packing/manifest';
import type { ShardedDatasetProps } from '../../lib';
import { ShardedDataset } from '../../lib';
import { useTestCredentials } from './aws-environment';
import type { FaultProxy } from './fault-proxy';
import type { S3TestServer } from './s3-server';
import { createTestBucket, putTestObjects, s3TestClient, startS3Server } from './s3-server';
import { StateMachineRunner } from './state-machine-runner';

/** What a suite's setup puts in the store before its tests. */
export interface PackingExecutionSetup {
  /** The purposes the buckets' names carry (createTestBucket). */
  readonly buckets: { readonly source: string; readonly dataset: string };
  /** Objects put into the source bucket, by key. */
  readonly objects: () => Readonly<Record<string, Buffer | string>>;
  /** Give the CLI, run in-process, the server's credentials (saved and restored around the suite). */
  readonly cliCredentials?: boolean;
}

/** The construct's props a suite chooses: the buckets are the harness's. */
export type PackingProps = Omit<ShardedDatasetProps, 'sourceBucket' | 'destinationBucket'>;

/**
 * The setup the executed packing state machine suites share (test/sharding/*.execution.test.ts): one
 * local S3 server for the file, with a source and a dataset bucket, and the ShardedDataset state
 * machine synthesized and run against it. `PackingExecution.setUp` registers the suite's beforeAll
 * and afterAll; the fields are set once its beforeAll has run.
 */
export class PackingExecution {
  /** Starts the server and fills the source bucket before the suite's tests; stops it after them. */
  public static setUp(setup: PackingExecutionSetup): PackingExecution {
    const harness = new PackingExecution();
    let restoreEnvironment: (() => void) | undefined;
    beforeAll(async () => {
      harness.server = await startS3Server();
      harness.client = s3TestClient(harness.server);
      harness.sourceBucket = await createTestBucket(harness.client, setup.buckets.source);
      harness.datasetBucket = await createTestBucket(harness.client, setup.buckets.dataset);
      await putTestObjects(harness.client, harness.sourceBucket, setup.objects());
      if (setup.cliCredentials) restoreEnvironment = useTestCredentials(harness.server.credentials);
    }, 90_000);
    afterAll(async () => {
      restoreEnvironment?.();
      harness.client?.destroy();
      await harness.server?.stop();
    });
    return harness;
  }

  public server!: S3TestServer;
  public client!: S3Client;
  public sourceBucket!: string;
  public datasetBucket!: string;

  private constructor() {}

  /** The dataset under `prefix` of the dataset bucket. */
  public dataset(prefix: string): S3Sink {
    return new S3Sink({ client: this.client, bucket: this.datasetBucket, prefix });
  }

  /** The root manifest of the dataset under `prefix`. */
  public async manifestOf(prefix: string): Promise<Manifest> {
    return JSON.parse((await this.dataset(prefix).get(MANIFEST_KEY)).toString('utf8')) as Manifest;
  }

  /**
   * The construct's state machine with `props` over the source bucket into the dataset bucket, run against
   * the local S3 server (through `proxy` when given: the handlers' S3 calls go through it).
   */
  public packing(props: PackingProps, proxy?: FaultProxy): StateMachineRunner {
    const stack = new Stack(new App(), 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
    const source = new s3.Bucket(stack, 'Raw');
    const destination = new s3.Bucket(stack, 'Packed');
    new ShardedDataset(stack, 'Dataset', { ...props, sourceBucket: source, destinationBucket: destination });
    const logicalId = (bucket: s3.Bucket) => stack.getLogicalId(bucket.node.defaultChild as s3.CfnBucket);
    return StateMachineRunner.fromTemplate(Template.fromStack(stack), { s3: proxy ? { ...this.server, endpoint: proxy.endpoint } : this.server }, {
      references: { [logicalId(source)]: this.sourceBucket, [logicalId(destination)]: this.datasetBucket },
    });
  }
}
