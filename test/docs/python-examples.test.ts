import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LocalDirectorySink, LocalDirectorySource } from '../../lambda/io/local-directory';
import { packDataset } from '../../lambda/packing/pack';
import { jpegSourceFolder } from '../support/jpeg-dataset';
import { listFiles, temporaryFolders, writeFiles } from '../support/local-files';
import type { CodeBlock } from '../support/markdown';
import { codeBlocks, REPO_ROOT, userPages } from '../support/markdown';
import type { S3TestServer } from '../support/s3-server';
import { createTestBucket, putTestObjects, s3TestClient, startS3Server } from '../support/s3-server';

// The ```python run blocks of the docs run to their end against real data (docs/contributing.md
// "Writing these docs"): a dataset packed here stands for the folder, the S3 prefix and the
// SageMaker channel they name, each block in a Python process of its own.

const RUN_BLOCKS = userPages()
  .flatMap((page) => codeBlocks(page, fs.readFileSync(path.join(REPO_ROOT, page), 'utf8')))
  .filter((block) => block.language === 'python' && block.flags.includes('run'));
/** The places the examples name; each stands for the dataset packed here. */
const EXAMPLE_FOLDER = '"/data/flowers"';
const EXAMPLE_PREFIX = '"s3://my-bucket/datasets/flowers/"';
/** The channel example reads SageMaker's /opt/ml/input; the test's own input folder stands in for it. */
const CHANNEL_EXAMPLE = '"sagemaker://train"';

function python(): string {
  if (process.env.PYTHON) return process.env.PYTHON;
  const torch = spawnSync('/usr/bin/python3', ['-c', 'import torch, torchvision, boto3'], { stdio: 'ignore', timeout: 60_000 });
  return torch.status === 0 ? '/usr/bin/python3' : 'python3';
}

const folder = temporaryFolders();
let server: S3TestServer;
let places: { folder: string; prefix: string; inputDir: string };
let environment: Record<string, string>;

beforeAll(async () => {
  const source = folder('docs-run-src');
  jpegSourceFolder(source, 12, ['cat', 'dog']);
  const dataset = folder('docs-run-dataset');
  await packDataset({ source: new LocalDirectorySource(source), sink: new LocalDirectorySink(dataset), format: 'tfrecord', seed: 1, shardCount: 3 });
  server = await startS3Server();
  const client = s3TestClient(server);
  const bucket = await createTestBucket(client, 'docs-run');
  await putTestObjects(client, bucket, Object.fromEntries(listFiles(dataset).map((key) => [`datasets/flowers/${key}`, fs.readFileSync(path.join(dataset, key))])));
  // A SageMaker job's input folder: the channel `train` is the dataset root (File mode of the whole prefix).
  const inputDir = folder('docs-run-input');
  writeFiles(inputDir, { 'config/inputdataconfig.json': JSON.stringify({ train: { TrainingInputMode: 'File' } }) });
  fs.mkdirSync(path.join(inputDir, 'data'));
  fs.symlinkSync(dataset, path.join(inputDir, 'data', 'train'));
  places = { folder: dataset, prefix: `s3://${bucket}/datasets/flowers/`, inputDir };
  environment = {
    PYTHONPATH: path.join(REPO_ROOT, 'container'), PYTHONDONTWRITEBYTECODE: '1', TMPDIR: folder('docs-run-tmp'),
    AWS_ENDPOINT_URL: server.endpoint, AWS_ACCESS_KEY_ID: server.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: server.credentials.secretAccessKey, AWS_DEFAULT_REGION: server.region,
  };
}, 180_000);

afterAll(async () => {
  await server?.stop();
});

/** Runs a block with its places standing for the test's; its exit status and output. */
function runBlock(block: CodeBlock): { status: number | null; output: string } {
  const code = block.code
    .split(EXAMPLE_FOLDER).join(JSON.stringify(places.folder))
    .split(EXAMPLE_PREFIX).join(JSON.stringify(places.prefix))
    .split(CHANNEL_EXAMPLE).join(`${CHANNEL_EXAMPLE}, input_dir=${JSON.stringify(places.inputDir)}`);
  const run = spawnSync(python(), ['-c', code], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 300_000, env: { ...process.env, ...environment } });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the ```python run blocks of the docs', () => {
  test('docs/readers.md has one for a folder, one for an S3 prefix and one for a SageMaker channel', () => {
    const named = (place: string) => RUN_BLOCKS.filter((block) => block.page === 'docs/readers.md' && block.code.includes(place)).length;
    expect([named(EXAMPLE_FOLDER), named(EXAMPLE_PREFIX), named(CHANNEL_EXAMPLE)]).toEqual([1, 1, 1]);
  });

  test.each(RUN_BLOCKS.map((block) => [`${block.page}:${block.line}`, block] as const))('%s runs to its end on the dataset packed here', (_where, block) => {
    const run = runBlock(block);
    if (run.status !== 0) throw new Error(`${block.page}:${block.line} exited with ${run.status}:\n${run.output}`);
  }, 300_000);

  test('a block that reads a location with no dataset fails: the blocks are run, not only compiled', () => {
    const wrong: CodeBlock = {
      page: 'wrong.md', line: 3, language: 'python', flags: ['run'],
      code: 'from shardio import LoaderOptions, data_loader\nfor batch in data_loader("/data/no-such-dataset", 4, LoaderOptions(num_workers=0)):\n    pass\n',
    };
    const run = runBlock(wrong);
    expect(run.status).not.toBe(0);
    expect(run.output).toMatch(/dataset location '\/data\/no-such-dataset': no folder/);
  });
});
