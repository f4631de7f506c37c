import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { Manifest } from '../../lambda/packing/manifest';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import { listFiles, seededBytes, temporaryFolders, writeFiles } from '../support/local-files';
import { runCli } from '../support/run-cli';

const folder = temporaryFolders();

function sourceFolder(): string {
  const dir = folder('src');
  writeFiles(dir, { 'cat/1.jpg': seededBytes('entries/1', 900), 'dog/2.jpg': seededBytes('entries/2', 700) });
  return dir;
}

function readManifest(outDir: string): Manifest {
  return JSON.parse(fs.readFileSync(path.join(outDir, MANIFEST_KEY), 'utf8')) as Manifest;
}

describe('training-io pack never packs its own output', () => {
  test('a link in the source to the output, before the output exists: exit 2 naming the link, nothing written', async () => {
    // GIVEN: the link leads nowhere yet; the run would create its target
    const source = sourceFolder();
    const output = path.join(folder('out'), 'dataset');
    fs.symlinkSync(output, path.join(source, 'cat', 'packed'));

    // WHEN
    const { code, stderr } = await runCli('pack', '--content', 'any', source, output);

    // THEN
    expect(code).toBe(2);
    expect(stderr).toMatch(/^training-io: 'cat\/packed' in the source .* leads to .*\/dataset, which is the output folder .*: packing it would pack the dataset into itself/m);
    expect(fs.existsSync(output)).toBe(false);
  });

  test('a link in the source to the output of an earlier run: exit 2, and the published version stays the only one', async () => {
    // GIVEN
    const source = sourceFolder();
    const output = path.join(folder('out'), 'dataset');
    expect((await runCli('pack', '--content', 'any', source, output)).code).toBe(0);
    const written = listFiles(output);
    fs.symlinkSync(path.join(output, 'versions'), path.join(source, 'dog', 'versions'));

    // WHEN
    const { code, stderr } = await runCli('pack', '--content', 'any', source, output);

    // THEN
    expect(code).toBe(2);
    expect(stderr).toMatch(/'dog\/versions' in the source .* leads to .*\/dataset\/versions, which is inside the output folder/);
    expect(listFiles(output)).toEqual(written);
    expect(readManifest(output).records).toBe(2);
  });

  test('an output inside a folder the source links to: exit 2 naming the link', async () => {
    // GIVEN
    const source = sourceFolder();
    const shared = folder('shared');
    writeFiles(shared, { 'bird/3.jpg': 'three' });
    fs.symlinkSync(path.join(shared, 'bird'), path.join(source, 'bird'));
    const output = path.join(shared, 'bird', 'packed');

    // WHEN
    const { code, stderr } = await runCli('pack', '--content', 'any', source, output);

    // THEN
    expect(code).toBe(2);
    expect(stderr).toMatch(/'bird' in the source .* leads to .*\/bird, which holds the output folder .*\/bird\/packed/);
    expect(fs.existsSync(output)).toBe(false);
  });
});

describe('training-io pack lists every entry it cannot pack as a failure', () => {
  test('a link to itself (ELOOP), a FIFO, a socket and a link out of the source to a device are listed failures with their reason; the rest is packed (--allow-missing)', async () => {
    // GIVEN
    const source = sourceFolder();
    fs.symlinkSync('loop.jpg', path.join(source, 'cat', 'loop.jpg'));
    execFileSync('mkfifo', [path.join(source, 'cat', 'fifo.jpg')]);
    fs.symlinkSync('/dev/null', path.join(source, 'dog', 'null.jpg'));
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path.join(source, 'dog', 'socket.jpg'), resolve));
    const output = folder('out');

    // WHEN
    let run;
    try {
      run = await runCli('pack', '--content', 'any', source, output, '--allow-missing');
    } finally {
      server.close();
    }

    // THEN
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/published without the 4 file\(s\) that could not be packed/);
    const manifest = readManifest(output);
    expect(manifest.records).toBe(2);
    expect(manifest.source.objects).toBe(6);
    expect(manifest.failures).toEqual([
      { key: 'cat/fifo.jpg', reason: expect.stringMatching(/not a regular file \(a FIFO\)/) },
      { key: 'cat/loop.jpg', reason: expect.stringMatching(/^ELOOP/) },
      // A link out of the source, refused whatever it leads to (issue 38): /dev/null is never opened.
      { key: 'dog/null.jpg', reason: expect.stringMatching(/a symbolic link to \/dev\/null, outside the source/) },
      { key: 'dog/socket.jpg', reason: expect.stringMatching(/not a regular file \(a socket\)/) },
    ]);
    expect((await runCli('verify', output, '--allow-missing')).code).toBe(0);
  });

  test('a FIFO that a writer holds open is listed as a failure, not read', async () => {
    // GIVEN: a writer that keeps the FIFO open and writes nothing (a reader would wait for ever)
    const source = sourceFolder();
    const fifo = path.join(source, 'cat', 'held.jpg');
    execFileSync('mkfifo', [fifo]);
    const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    const writer = fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
    const output = folder('out');

    // WHEN
    let run;
    try {
      run = await runCli('pack', '--content', 'any', source, output, '--allow-missing');
    } finally {
      fs.closeSync(writer);
      fs.closeSync(reader);
    }

    // THEN
    expect(run.code).toBe(0);
    expect(readManifest(output).failures).toEqual([{ key: 'cat/held.jpg', reason: expect.stringMatching(/not a regular file \(a FIFO\)/) }]);
  });

  test('a file over the 128 MiB shard limit is a listed failure naming its size and the limit, never read into a shard, and leaves no empty shard', async () => {
    // GIVEN: sparse, so the test writes no 128 MiB to disk
    const source = sourceFolder();
    const huge = path.join(source, 'cat', 'huge.bin');
    fs.writeFileSync(huge, '');
    fs.truncateSync(huge, 128 * 2 ** 20 + 1);
    const output = folder('out');

    // WHEN
    const { code, stdout } = await runCli('pack', '--content', 'any', source, output, '--allow-missing');

    // THEN
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ {11}cat\/huge\.bin: 134217729 bytes \(128\.0 MiB\) is over the 128 MiB shard limit/m);
    const manifest = readManifest(output);
    expect(manifest.records).toBe(2);
    expect(manifest.failures).toEqual([{ key: 'cat/huge.bin', reason: expect.stringMatching(/^134217729 bytes .* shard limit: a shard holds whole files/) }]);
    expect(Math.max(...manifest.shards.map((shard) => shard.bytes))).toBeLessThan(2 ** 20);
    expect(manifest.shards.filter((shard) => shard.records === 0)).toEqual([]);
    expect((await runCli('verify', output, '--allow-missing')).code).toBe(0);
  });
});

describe('training-io pack and symbolic links out of the source (issue 38)', () => {
  /** A source whose cat/passwd.jpg links to a file outside it and whose bird/ links to a folder outside it (labels: none). */
  function sourceWithLinksOut(): { source: string; secret: string } {
    const source = sourceFolder();
    const outside = folder('outside');
    writeFiles(outside, { 'passwd': 'root:x:0:0:root:/root:/bin/bash\n', 'bird/3.jpg': seededBytes('entries/3', 800) });
    fs.symlinkSync(path.join(outside, 'passwd'), path.join(source, 'cat', 'passwd.jpg'));
    fs.symlinkSync(path.join(outside, 'bird'), path.join(source, 'bird'));
    return { source, secret: fs.realpathSync(path.join(outside, 'passwd')) };
  }

  test('are refused and listed as failures, never read: exit 1, nothing published; with --allow-missing the manifest lists them', async () => {
    // GIVEN
    const { source, secret } = sourceWithLinksOut();
    const output = folder('out');

    // WHEN
    const refused = await runCli('pack', '--labels', 'none', source, output);
    const allowed = await runCli('pack', '--labels', 'none', source, output, '--allow-missing');

    // THEN
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(new RegExp(`cat/passwd\\.jpg: ERR_LINK_OUTSIDE_SOURCE: a symbolic link to ${secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, outside the source`));
    expect(refused.stdout).toMatch(/bird: ERR_LINK_OUTSIDE_SOURCE: a symbolic link to .*, outside the source .*--follow-symlinks/);
    expect(allowed.code).toBe(0);
    const manifest = readManifest(output);
    expect(manifest.records).toBe(2);
    expect(manifest.failures.map((failure) => failure.key)).toEqual(['bird', 'cat/passwd.jpg']);
    const packed = listFiles(output).filter((file) => file.includes('/shards/')).map((file) => fs.readFileSync(path.join(output, file)));
    expect(packed.some((shard) => shard.includes('root:x:0:0'))).toBe(false);
  });

  test('--follow-symlinks packs what they lead to', async () => {
    // GIVEN
    const { source } = sourceWithLinksOut();
    const output = folder('out');

    // WHEN
    const { code } = await runCli('pack', '--labels', 'none', source, output, '--follow-symlinks');

    // THEN
    expect(code).toBe(0);
    const manifest = readManifest(output);
    expect(manifest).toMatchObject({ records: 4, failures: [] });
  });
});
