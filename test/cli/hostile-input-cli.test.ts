import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Manifest } from '../../lambda/packing/manifest';
import { MANIFEST_KEY, VersionLayout } from '../../lambda/packing/dataset-layout';
import { seededBytes, temporaryFolders, writeFiles } from '../support/local-files';
import { runCli } from '../support/run-cli';

const folder = temporaryFolders();
/** A name that retitles the terminal, overwrites its line and fakes a summary line of its own. */
const HOSTILE = '\x1b]0;pwned\x07evil\r\nfailures   0.jpg';
const HOSTILE_SHOWN = '\\x1b]0;pwned\\x07evil\\r\\nfailures   0.jpg';

function readManifest(output: string, key = MANIFEST_KEY): Manifest {
  return JSON.parse(fs.readFileSync(path.join(output, key), 'utf8')) as Manifest;
}

function source(): string {
  const dir = folder('src');
  writeFiles(dir, { 'cat/1.jpg': seededBytes('hostile/1', 300), 'dog/2.jpg': seededBytes('hostile/2', 400) });
  return dir;
}

/** Nothing the terminal would act on: no control character but the line feeds that end lines. */
function expectOnlyPrintable(text: string): void {
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  expect(text.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
}

describe('training-io prints names escaped', () => {
  test('a file whose name holds ESC, BEL, CR and LF: listed as a failure on one line, escaped, and nothing else printed raw', async () => {
    // GIVEN: a link that leads nowhere, so that its name is printed among the failures
    const src = source();
    fs.symlinkSync(path.join(src, 'nowhere'), path.join(src, 'dog', HOSTILE));

    // WHEN
    const run = await runCli('pack', '--content', 'any', '--allow-missing', src, folder('out'));

    // THEN
    expect(run.code).toBe(0);
    expectOnlyPrintable(run.stdout);
    expect(run.stdout).toContain(`           dog/${HOSTILE_SHOWN}: `);
    expect(run.stdout.match(/^failures/gm)).toEqual(['failures']);
  });

  test('an unpublished run lists the failures escaped too', async () => {
    // GIVEN
    const src = source();
    fs.symlinkSync(path.join(src, 'nowhere'), path.join(src, 'cat', HOSTILE));

    // WHEN
    const run = await runCli('pack', '--content', 'any', src, folder('out'));

    // THEN
    expect(run.code).toBe(1);
    expectOnlyPrintable(run.stdout);
    expect(run.stdout).toContain(`cat/${HOSTILE_SHOWN}: `);
  });

  test('an argument with control characters is echoed escaped in the usage error', async () => {
    // WHEN
    const run = await runCli('plan', '--objects', `4${HOSTILE}`, '--bytes', '1GB', '--instance', 'ml.p3.2xlarge');

    // THEN
    expect(run.code).toBe(2);
    expectOnlyPrintable(run.stderr);
    expect(run.stderr).toContain(`--objects must be a whole number ≥ 1, got '4${HOSTILE_SHOWN}'`);
  });

  test('a verify warning that quotes a name from the dataset is escaped', async () => {
    // GIVEN: an object the manifest does not list (a leftover: a warning, not a failed version), under a hostile name
    const output = folder('out');
    expect((await runCli('pack', '--content', 'any', source(), output)).code).toBe(0);
    const shards = path.dirname(path.join(output, readManifest(output).shards[0].key));
    fs.writeFileSync(path.join(shards, `${HOSTILE}.tfrecord`), 'stray');

    // WHEN
    const run = await runCli('verify', output);

    // THEN
    expect(run.code).toBe(0);
    expectOnlyPrintable(run.stdout);
    expect(run.stdout).toMatch(/^warning: 1 leftover/m);
    expect(run.stdout).toContain(HOSTILE_SHOWN);
  });
});

describe('training-io pack of names that are not UTF-8', () => {
  test('a file and a folder named in Latin-1 are listed as failures under escaped names; the rest is packed', async () => {
    // GIVEN
    const src = source();
    fs.writeFileSync(Buffer.from(`${src}/cat/caf\xe9.jpg`, 'latin1'), 'a file named in Latin-1');
    fs.mkdirSync(Buffer.from(`${src}/dog/d\xe9j\xe0`, 'latin1'));
    fs.writeFileSync(Buffer.from(`${src}/dog/d\xe9j\xe0/inside.jpg`, 'latin1'), 'a file in a folder named in Latin-1');
    const output = folder('out');

    // WHEN
    const run = await runCli('pack', '--content', 'any', '--allow-missing', src, output);

    // THEN
    expect(run.code).toBe(0);
    const manifest = readManifest(output);
    expect(manifest.records).toBe(2);
    expect(manifest.failures).toEqual([
      { key: 'cat/caf\\xe9.jpg', reason: expect.stringMatching(/its name is not UTF-8 .*: not packed; rename it in UTF-8 to pack it/) },
      { key: 'dog/d\\xe9j\\xe0', reason: expect.stringMatching(/its name is not UTF-8 .*: not packed, nor any file in this folder;/) },
    ]);
    expect(run.stdout).toContain('           cat/caf\\xe9.jpg: ');
    expect((await runCli('verify', '--allow-missing', output)).code).toBe(0);
  });
});

describe('training-io refuses credentials in a location before echoing any of it', () => {
  test.each([
    ['pack', ['pack', 's3://User1234:Pass5678@bkt1/raw/', '/tmp/out']],
    ['pack, as the output', ['pack', '/tmp/in', 's3://User1234:Pass5678@bkt1/']],
    ['verify', ['verify', 's3://User1234@bkt1/data/']],
    ['verify, an https:// URL', ['verify', 'https://User1234:Pass5678@example.com/data/']],
  ])('%s', async (_, argv) => {
    // WHEN
    const run = await runCli(...argv);

    // THEN
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/is an? (s3|https):\/\/ URL with a user name or password before '@' \(not shown\): S3 credentials come from the environment/);
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/User1234|Pass5678|bkt1/);
  });
});

describe('training-io echoes long values cut short', () => {
  test('a 100,000-character --instance is echoed as its first 200 characters and its length', async () => {
    // WHEN
    const run = await runCli('plan', '--objects', '1000', '--bytes', '1GB', '--instance', 'x'.repeat(100_000));

    // THEN
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`got '${'x'.repeat(200)}… (100000 characters)'`);
    expect(run.stderr.length).toBeLessThan(1000);
  });
});

describe('training-io diagnose --metrics reads only a regular JSON file within the limits', () => {
  test('a device (/dev/zero) is refused without reading it', async () => {
    // WHEN
    const run = await runCli('diagnose', '--metrics', '/dev/zero');

    // THEN
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('training-io diagnose: --metrics /dev/zero: not a regular file; only a file is read as JSON\n');
  });

  test('a file nested 200,000 deep is refused naming it, not with a stack overflow', async () => {
    // GIVEN
    const file = path.join(folder('metrics'), 'deep.json');
    fs.writeFileSync(file, `${'['.repeat(200_000)}${']'.repeat(200_000)}`);

    // WHEN
    const run = await runCli('diagnose', '--metrics', file);

    // THEN
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`training-io diagnose: --metrics ${file}: JSON nested more than 64 levels deep; refused (the documents this tool writes nest 4 deep)\n`);
  });
});

describe('training-io verify refuses hostile manifests', () => {
  async function packed(): Promise<string> {
    const output = folder('out');
    expect((await runCli('pack', '--content', 'any', source(), output)).code).toBe(0);
    return output;
  }

  test('a manifest nested 200,000 deep is a problem naming it', async () => {
    // GIVEN
    const output = await packed();
    fs.writeFileSync(path.join(output, MANIFEST_KEY), `${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}`);

    // WHEN
    const run = await runCli('verify', output);

    // THEN
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^problem: manifest\.json: cannot be read \(manifest\.json: JSON nested more than 64 levels deep; .*\); it is not a manifest this engine writes/m);
  });

  test('a negative firstRecordId is a problem naming the shard', async () => {
    // GIVEN
    const output = await packed();
    const manifest = readManifest(output);
    const tampered = { ...manifest, shards: manifest.shards.map((shard, i) => (i === 0 ? { ...shard, firstRecordId: -5 } : shard)) };
    for (const key of [MANIFEST_KEY, new VersionLayout(manifest.datasetVersion).manifestKey]) {
      fs.writeFileSync(path.join(output, key), JSON.stringify(tampered));
    }

    // WHEN
    const run = await runCli('verify', output);

    // THEN
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`problem: manifest.json: ${manifest.shards[0].key}: record ids -5–${manifest.shards[0].lastRecordId} for `
      + `${manifest.shards[0].records} record(s); expected whole numbers from 0, the first at most the last`);
  });

  test('a pinned version whose manifest names another version is a problem, not checked as that version', async () => {
    // GIVEN: two published versions, the older one's manifest replaced by the newer one's
    const output = await packed();
    const first = readManifest(output).datasetVersion;
    const src = source();
    writeFiles(src, { 'cat/3.jpg': seededBytes('hostile/3', 500) });
    expect((await runCli('pack', '--content', 'any', src, output)).code).toBe(0);
    const second = readManifest(output).datasetVersion;
    fs.copyFileSync(path.join(output, new VersionLayout(second).manifestKey), path.join(output, new VersionLayout(first).manifestKey));

    // WHEN
    const run = await runCli('verify', output, '--version', first);

    // THEN
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`problem: ${new VersionLayout(first).manifestKey}: names version '${second}', not ${first}: not that version's manifest`);
  });
});
