import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Manifest } from '../../lambda/packing/manifest';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import { seededBytes, temporaryFolders, writeFiles } from '../support/local-files';
import { runCli } from '../support/run-cli';

const folder = temporaryFolders();

function sourceFolder(): string {
  const dir = folder('src');
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < 6; i++) files[`${i % 2 === 0 ? 'cat' : 'dog'}/${i}.jpg`] = seededBytes(`verify/${i}`, 400 + 31 * i);
  writeFiles(dir, files);
  return dir;
}

function readManifest(outDir: string, key = MANIFEST_KEY): Manifest {
  return JSON.parse(fs.readFileSync(path.join(outDir, key), 'utf8')) as Manifest;
}

/** A packed dataset (to a target size: a rerun with new files is incremental), and the key of its first shard's member list. */
async function packed(): Promise<{ source: string; output: string; membersKey: string }> {
  const source = sourceFolder();
  const output = folder('out');
  expect((await runCli('pack', '--content', 'any', source, output)).code).toBe(0);
  return { source, output, membersKey: readManifest(output).shards[0].membersKey };
}

describe('training-io verify checks every member list', () => {
  test('a missing member list: verify exits 1 naming it; the next pack fails naming it and pointing at --full, which repacks', async () => {
    // GIVEN
    const { source, output, membersKey } = await packed();
    fs.rmSync(path.join(output, membersKey));
    writeFiles(source, { 'cat/new.jpg': 'a new file, so that the rerun is incremental' });

    // WHEN
    const verified = await runCli('verify', output);
    const repack = runCli('pack', '--content', 'any', source, output);

    // THEN
    expect(verified.code).toBe(1);
    expect(verified.stdout).toMatch(new RegExp(`^problem: ${membersKey}: cannot be read \\(.*ENOENT.*\\); .*a full repack \\(--full\\) rewrites it$`, 'm'));
    await expect(repack).rejects.toThrow(new RegExp(`member list ${membersKey} of the current version is missing .*repack everything with --full`));
    expect((await runCli('pack', '--content', 'any', source, output, '--full')).code).toBe(0);
    expect((await runCli('verify', output)).code).toBe(0);
  });

  test('a garbled member list: verify exits 1 naming it and its line; the next pack fails the same way', async () => {
    // GIVEN
    const { source, output, membersKey } = await packed();
    fs.writeFileSync(path.join(output, membersKey), 'this is not a member list\n');
    writeFiles(source, { 'dog/new.jpg': 'a new file' });

    // WHEN
    const verified = await runCli('verify', output);

    // THEN
    expect(verified.code).toBe(1);
    expect(verified.stdout).toMatch(new RegExp(`^problem: ${membersKey} line 1: expected \\[key, size, label, recordId, modified\\(, parts\\)\\], got this is not a member list; .*--full`, 'm'));
    await expect(runCli('pack', '--content', 'any', source, output)).rejects.toThrow(new RegExp(`member list ${membersKey} line 1: .*--full`));
  });

  test('a member list that lost a line no longer accounts for its shard: verify exits 1 giving both counts', async () => {
    // GIVEN
    const { output, membersKey } = await packed();
    const file = path.join(output, membersKey);
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
    fs.writeFileSync(file, `${lines.slice(1).join('\n')}\n`);
    const shard = readManifest(output).shards[0];

    // WHEN
    const verified = await runCli('verify', output);

    // THEN
    expect(verified.code).toBe(1);
    expect(verified.stdout).toContain(`problem: ${membersKey}: ${lines.length - 1} members, ${lines.length - 1} of them not listed as failures, `
      + `but ${shard.key} has ${shard.records} records in the manifest`);
  });
});

describe('training-io verify --version', () => {
  test('a version whose folder holds a manifest but that was never published: exit 1 naming it and the published ones', async () => {
    // GIVEN: a run that wrote its manifest and lost the race to publish
    const { output } = await packed();
    const current = readManifest(output);
    const unpublished = 'v00000002-0badc0de';
    writeFiles(output, { [`versions/${unpublished}/manifest.json`]: JSON.stringify({ ...current, datasetVersion: unpublished, sequence: 2 }) });

    // WHEN
    const verified = await runCli('verify', output, '--version', unpublished);
    const published = await runCli('verify', output, '--version', current.datasetVersion);

    // THEN
    expect(verified.code).toBe(1);
    expect(verified.stdout).toMatch(new RegExp(`^problem: version ${unpublished} was never published in file://.*; published versions: ${current.datasetVersion}$`, 'm'));
    expect(published.code).toBe(0);
  });

  test('a version that does not exist: exit 1 naming it and the published ones', async () => {
    // GIVEN
    const { output } = await packed();

    // WHEN
    const { code, stdout } = await runCli('verify', output, '--version', 'v00000042-00000000');

    // THEN
    expect(code).toBe(1);
    expect(stdout).toMatch(new RegExp(`^problem: version v00000042-00000000 was never published .*; published versions: ${readManifest(output).datasetVersion}$`, 'm'));
  });
});

describe('training-io verify on a first try', () => {
  test('a folder that does not exist is named as missing (exit 2), not blamed on manifest.json', async () => {
    // GIVEN
    const missing = path.join(folder('parent'), 'no-such-dataset');

    // WHEN
    const { code, stdout, stderr } = await runCli('verify', missing);

    // THEN
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(`training-io: dataset folder '${missing}' does not exist\nRun 'training-io verify --help' for the usage.\n`);
  });

  test('shows its progress in shards and MB on stderr, the report alone on stdout', async () => {
    // GIVEN
    const output = folder('out');
    expect((await runCli('pack', '--content', 'any', sourceFolder(), output, '--shards', '3')).code).toBe(0);

    // WHEN
    const { code, stdout, stderr } = await runCli('verify', output);

    // THEN
    expect(code).toBe(0);
    expect(stderr).toMatch(/^verifying +0% {2}0\/3 shards/m);
    expect(stderr).toMatch(/^verifying 100% {2}3\/3 shards {2}[\d.]+ MB\/s/m);
    expect(stdout).toMatch(/^ok: 3 shards, 6 records/m);
  });
});

describe('training-io verify names leftovers, and --repair removes them', () => {
  test('a shard in the version\'s folder that its manifest does not list: a warning naming it, exit 0; --repair removes it, and the next verify is clean', async () => {
    // GIVEN: a stopped packer attempt's shard, landed in the published version's folder
    const { output } = await packed();
    const manifest = readManifest(output);
    const leftover = manifest.shards[0].key.replace(/\.tfrecord$/, '.5ca1ab1e.tfrecord');
    fs.copyFileSync(path.join(output, manifest.shards[0].key), path.join(output, leftover));

    // WHEN
    const verified = await runCli('verify', output);
    const repaired = await runCli('verify', '--repair', output);
    const after = await runCli('verify', output);

    // THEN
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(new RegExp(`^warning: 1 leftover\\(s\\) in ${manifest.datasetVersion}'s folder that its manifest does not list .*: ${leftover}; `
      + 'verify --repair removes them, the next publish those over 30 minutes old$', 'm'));
    expect(verified.stdout).toMatch(/^ok: /m);
    expect(repaired.code).toBe(0);
    expect(repaired.stdout).toMatch(new RegExp(`^repaired: removed 1 leftover\\(s\\) that ${manifest.datasetVersion}'s manifest does not list: ${leftover}$`, 'm'));
    expect(fs.existsSync(path.join(output, leftover))).toBe(false);
    expect(after.stdout).not.toMatch(/leftover/);
    expect(after.code).toBe(0);
  });
});
