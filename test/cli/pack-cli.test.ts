import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Manifest} from '../../lambda/packing/manifest';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import { listFiles, seededBytes, temporaryFolders, writeFiles } from '../support/local-files';
import { runCli } from '../support/run-cli';
import { LocalDirectorySink } from '../../lambda/io/local-directory';
import { datasetObjects, expectSameObjects, withoutVersionIds } from '../support/dataset-objects';

const folder = temporaryFolders();

/** A source folder of `count` small files in two class folders. */
function sourceFolder(count = 12): string {
  const dir = folder('src');
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < count; i++) files[`${i % 2 === 0 ? 'cat' : 'dog'}/${i}.jpg`] = seededBytes(`cli/${i}`, 500 + 37 * i);
  writeFiles(dir, files);
  return dir;
}

function readManifest(outDir: string): Manifest {
  return JSON.parse(fs.readFileSync(path.join(outDir, MANIFEST_KEY), 'utf8')) as Manifest;
}

describe('training-io pack and verify', () => {
  test('pack --help and docs/cli.md say that a file the image check refuses fails the run, not only one --resize cannot decode', async () => {
    // GIVEN
    const { stdout } = await runCli('pack', '--help');
    const page = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'cli.md'), 'utf8');
    // THEN: with folder labels every file is checked, whatever the preprocessing
    for (const text of [stdout, page]) {
      expect(text).not.toMatch(/(un|not )decodable with `?--resize/);
      expect(text.replace(/\s+/g, ' ')).toMatch(/refused by the image check of `?--content images/);
    }
  });

  test('pack then verify: both exit 0, and the summary gives files, shards, records and no failures', async () => {
    // GIVEN
    const source = sourceFolder(12);
    const output = path.join(folder('out'), 'dataset');

    // WHEN
    const packed = await runCli('pack', '--content', 'any', source, output, '--format', 'recordio', '--shards', '3', '--seed', '5');
    const verified = await runCli('verify', output);

    // THEN
    expect(packed.code).toBe(0);
    expect(packed.stdout).toMatch(/^ {11}12 files, /m);
    expect(packed.stdout).toMatch(/^format {5}recordio, seed 5, 2 classes$/m);
    expect(packed.stdout).toMatch(/^shards {5}3 \(/m);
    expect(packed.stdout).toMatch(/^records {4}12$/m);
    expect(packed.stdout).toMatch(/^failures {3}0$/m);
    expect(readManifest(output)).toMatchObject({ format: 'recordio', seed: 5, records: 12, failures: [] });
    // stderr: the progress lines alone
    expect(verified).toEqual({ code: 0, stdout: expect.stringMatching(/^ok: 3 shards, 12 records, /), stderr: expect.not.stringMatching(/training-io|problem/) });
  });

  test.each(['tfrecord', 'recordio'])('%s: a pack on one core (this thread alone) writes the bytes of a pack on four (worker threads)', async (format) => {
    // GIVEN
    const source = sourceFolder(40);
    const oneCore = path.join(folder('out'), 'one-core');
    const fourCores = path.join(folder('out'), 'four-cores');
    // The core module object itself: the CLI sizes its threads from it.
    // eslint-disable-next-line @typescript-eslint/consistent-type-imports, @typescript-eslint/no-require-imports -- spied on, so not a namespace copy
    const nodeOs: typeof import('node:os') = require('node:os');
    const cores = jest.spyOn(nodeOs, 'availableParallelism');

    // WHEN
    const codes: number[] = [];
    let coresAsked = 0;
    try {
      cores.mockReturnValue(1);
      codes.push((await runCli('pack', '--content', 'any', source, oneCore, '--format', format, '--shards', '4', '--seed', '3')).code);
      cores.mockReturnValue(4);
      codes.push((await runCli('pack', '--content', 'any', source, fourCores, '--format', format, '--shards', '4', '--seed', '3')).code);
    } finally {
      coresAsked = cores.mock.calls.length;
      cores.mockRestore();
    }

    // THEN
    expect(codes).toEqual([0, 0]);
    expect(coresAsked).toBeGreaterThanOrEqual(2);
    // The same shards, indexes and manifest; only the versions' random ids differ.
    const written = await datasetObjects(new LocalDirectorySink(oneCore));
    expect([...written.keys()].filter((key) => key.startsWith('shards/'))).toHaveLength(4);
    expectSameObjects(await datasetObjects(new LocalDirectorySink(fourCores)), written);
    expect(withoutVersionIds(readManifest(fourCores))).toEqual(withoutVersionIds(readManifest(oneCore)));
  });

  test('progress goes to stderr as plain lines when it is not a terminal', async () => {
    // GIVEN
    const source = sourceFolder(6);

    // WHEN
    const { code, stderr } = await runCli('pack', '--content', 'any', source, folder('out'));

    // THEN
    expect(code).toBe(0);
    expect(stderr).toMatch(/^packing +100% +6\/6 files .*MB\/s/m);
    // eslint-disable-next-line no-control-regex -- a carriage return or an escape sequence is what must not be there
    expect(stderr).not.toMatch(/[\r\x1b]/);
  });

  test('a file that cannot be read publishes nothing: exit 1, the summary names it, and the version before stays current', async () => {
    // GIVEN: a dataset at version 1, then a source with a file that cannot be read
    const source = sourceFolder(4);
    const output = folder('out');
    expect((await runCli('pack', '--content', 'any', source, output)).code).toBe(0);
    const first = readManifest(output);
    writeFiles(source, { 'cat/new.jpg': seededBytes('cli/new', 700) });
    fs.symlinkSync(path.join(source, 'gone.jpg'), path.join(source, 'cat', 'dangling.jpg'));
    const before = listFiles(output);

    // WHEN
    const { code, stdout, stderr } = await runCli('pack', '--content', 'any', source, output);

    // THEN: nothing of the run is left, readers still get version 1, and verify passes on it
    expect(code).toBe(1);
    expect(stdout).toMatch(new RegExp(`^version {4}v00000002-[0-9a-f]{8} not published: 1 file\\(s\\) could not be packed; ${first.datasetVersion} stays current$`, 'm'));
    expect(stdout).toMatch(/^failures {3}1\n {11}cat\/dangling\.jpg: ENOENT/m);
    expect(stderr).toMatch(/1 file\(s\) could not be packed: nothing was published; pass --allow-missing to publish without them/);
    expect(listFiles(output)).toEqual(before);
    expect(readManifest(output)).toEqual(first);
    expect((await runCli('verify', output)).code).toBe(0);
  });

  test('a failed first pack leaves no folder of its version behind, not even empty ones (issue 38)', async () => {
    // GIVEN: a first pack whose source has a file that cannot be read
    const source = sourceFolder(4);
    fs.symlinkSync(path.join(source, 'gone.jpg'), path.join(source, 'cat', 'dangling.jpg'));
    const output = folder('out');

    // WHEN
    const { code } = await runCli('pack', '--content', 'any', source, output);

    // THEN: versions/ holds nothing (no versions/<v>/{members,index,shards}), and the reader finds no version
    expect(code).toBe(1);
    expect(listFiles(output)).toEqual([]);
    expect(fs.readdirSync(output).flatMap((top) => [top, ...fs.readdirSync(path.join(output, top)).map((inner) => `${top}/${inner}`)])).toEqual(['versions']);
  });

  test('--allow-missing publishes without files that cannot be read: exit 0, the summary says so, they are listed in the manifest', async () => {
    // GIVEN
    const source = sourceFolder(4);
    fs.symlinkSync(path.join(source, 'gone.jpg'), path.join(source, 'dog', 'dangling.jpg'));
    const output = folder('out');

    // WHEN
    const { code, stdout } = await runCli('pack', '--content', 'any', source, output, '--allow-missing');

    // THEN
    expect(code).toBe(0);
    expect(stdout).toMatch(/^version {4}v00000001-[0-9a-f]{8}, published without the 1 file\(s\) that could not be packed \(--allow-missing\)$/m);
    expect(stdout).toMatch(/^failures {3}1\n {11}dog\/dangling\.jpg: ENOENT/m);
    expect(readManifest(output).failures.map((f) => f.key)).toEqual(['dog/dangling.jpg']);
    const verified = await runCli('verify', output);
    expect(verified.code).toBe(1);
    expect(verified.stdout).toMatch(/^problem: 1 source file\(s\) are not in the dataset .*dog\/dangling\.jpg \(ENOENT/m);
    expect((await runCli('verify', output, '--allow-missing')).code).toBe(0);
  });

  describe('bad input exits 2 with a message naming what is wrong and what is allowed, and writes nothing', () => {
    let source: string;
    let parent: string;
    let runs = 0;
    beforeAll(() => {
      source = sourceFolder(4);
      parent = folder('out');
    });

    test.each<[string, (src: string, out: string) => string[], RegExp]>([
      ['a source folder that does not exist', (src, out) => ['pack', `${src}-missing`, out], /source folder '.*-missing' does not exist/],
      ['a source that is a file', (src, out) => ['pack', path.join(src, 'cat', '0.jpg'), out], /source '.*0\.jpg' is not a folder/],
      ['an output folder inside the source', (src) => ['pack', src, path.join(src, 'shards-out')], /output folder '.*shards-out' is inside the source folder/],
      ['an output that is a symbolic link to a folder of the source', (src, out) => {
        fs.mkdirSync(path.dirname(out), { recursive: true });
        fs.symlinkSync(path.join(src, 'cat'), `${out}-link`);
        return ['pack', src, `${out}-link`];
      }, /output folder '.*-link' \(links resolved: '.*\/cat'\) is inside the source folder/],
      ['an output under a symbolic link to the source', (src, out) => {
        fs.mkdirSync(path.dirname(out), { recursive: true });
        fs.symlinkSync(src, `${out}-link`);
        return ['pack', src, path.join(`${out}-link`, 'packed')];
      }, /output folder '.*-link\/packed' \(links resolved: '.*\/packed'\) is inside the source folder/],
      ['a source inside the output folder', (src) => ['pack', path.join(src, 'cat'), src], /source folder '.*\/cat' is inside the output folder/],
      ['--format zip', (src, out) => ['pack', src, out, '--format', 'zip'], /--format must be 'tfrecord' or 'recordio', got "zip"/],
      ['--shard-size 200MiB', (src, out) => ['pack', src, out, '--shard-size', '200MiB'], /--shard-size must be a whole number of bytes between 1 MiB \(1048576\) and 128 MiB \(134217728\), got 200 MiB \(209715200 bytes\)/],
      ['--shard-size 12parsecs', (src, out) => ['pack', src, out, '--shard-size', '12parsecs'], /--shard-size must be a size such as 64MiB, 100MB or 1048576 \(bytes\), got '12parsecs'/],
      ['--shards 0', (src, out) => ['pack', src, out, '--shards', '0'], /--shards must be a whole number ≥ 1, got '0'/],
      ['--shards with --shard-size', (src, out) => ['pack', src, out, '--shards', '2', '--shard-size', '8MiB'], /give --shard-size or --shards, not both/],
      ['--consumers 0', (src, out) => ['pack', src, out, '--consumers', '0'], /--consumers must be a whole number ≥ 1, got '0'/],
      ['more consumers than files', (src, out) => ['pack', src, out, '--consumers', '5'], /consumers is 5 but the source has only 4 files/],
      ['--shards 1000000000, far above the 4 files (issue 38)', (src, out) => ['pack', src, out, '--shards', '1000000000'],
        /shardCount \(--shards\) must be between 1 and 4, the number of files in the source \(every shard holds at least one\), got 1000000000/],
      ['--shards 5, one above the 4 files', (src, out) => ['pack', src, out, '--shards', '5'], /shardCount \(--shards\) must be between 1 and 4, .*got 5$/],
      ['--labels weird', (src, out) => ['pack', src, out, '--labels', 'weird'], /--labels must be 'folder' or 'none' or 'file', got "weird"/],
      ['an unknown option', (src, out) => ['pack', src, out, '--bogus'], /unknown option '--bogus'/],
      ['one folder only', (src) => ['pack', src], /pack takes a source and an output \(folders or s3:\/\/ URIs\), got 1 argument/],
      ['three folders', (src, out) => ['pack', src, out, out], /pack takes a source and an output \(folders or s3:\/\/ URIs\), got 3 argument/],
    ])('%s', async (_what, argv, message) => {
      // GIVEN
      const output = path.join(parent, `run-${++runs}`);

      // WHEN
      const { code, stdout, stderr } = await runCli(...argv(source, output));

      // THEN
      expect(code).toBe(2);
      expect(stderr.split('\n')).toEqual([expect.stringMatching(new RegExp(`^training-io: .*${message.source}`)),
        "Run 'training-io pack --help' for the usage.", '']);
      expect(stdout).toBe('');
      expect(fs.existsSync(output)).toBe(false);
      expect(listFiles(source)).toEqual(['cat/0.jpg', 'cat/2.jpg', 'dog/1.jpg', 'dog/3.jpg']);
    });
  });

  test('a file at the root of the source with labels from folders exits 2 and suggests --labels none', async () => {
    // GIVEN
    const source = sourceFolder(2);
    writeFiles(source, { 'stray.jpg': 'not in a class folder' });

    // WHEN
    const { code, stderr } = await runCli('pack', '--content', 'any', source, folder('out'));

    // THEN
    expect(code).toBe(2);
    expect(stderr).toMatch(/'stray\.jpg' is at the root of the source: move it into a class folder .* or use labels 'none'/);
  });

  test('verify of a folder without manifest.json exits 1 with a problem line', async () => {
    // GIVEN
    const empty = folder('empty');

    // WHEN
    const { code, stdout } = await runCli('verify', empty);

    // THEN
    expect(code).toBe(1);
    expect(stdout).toMatch(/^problem: manifest\.json: cannot be read \(ENOENT.*\); the dataset is incomplete or not a packed dataset$/m);
    expect(stdout).toMatch(/^FAILED: 0 shards, 0 records/m);
  });

  test('verify of a dataset with a damaged shard exits 1 naming the shard', async () => {
    // GIVEN
    const output = folder('out');
    expect((await runCli('pack', '--content', 'any', sourceFolder(6), output, '--shards', '2')).code).toBe(0);
    const shardKey = readManifest(output).shards[1].key;
    const shard = path.join(output, shardKey);
    const data = fs.readFileSync(shard);
    data[data.length - 10] ^= 0x01;
    fs.writeFileSync(shard, data);

    // WHEN
    const { code, stdout } = await runCli('verify', output);

    // THEN
    expect(code).toBe(1);
    expect(shardKey).toMatch(/^versions\/v00000001-[0-9a-f]{8}\/shards\/part-00001-of-00002\.tfrecord$/);
    expect(stdout).toMatch(new RegExp(`^problem: ${shardKey}: CRC32C `, 'm'));
    expect(stdout).toMatch(/^FAILED: 2 shards/m);
  });

  test('verify takes exactly one folder: otherwise exit 2 pointing to its usage', async () => {
    // WHEN
    const { code, stderr } = await runCli('verify');

    // THEN
    expect(code).toBe(2);
    expect(stderr).toMatch(/verify takes one packed dataset \(folder or s3:\/\/ URI\), got 0 argument\(s\)/);
    expect(stderr).toContain("\nRun 'training-io verify --help' for the usage.\n");
  });
});

describe('training-io pack on a disk that fills', () => {
  const REPO = path.join(__dirname, '..', '..');

  test('a write the file system refuses (EFBIG under `ulimit -f`, as ENOSPC would) names the file, leaves no partial file and publishes nothing; a rerun with room publishes', async () => {
    // GIVEN a source whose one shard outgrows the 16 KiB a file may have in this process
    const source = sourceFolder(40);
    const output = folder('out');

    // WHEN the CLI runs under the limit (a real refusal by the kernel, not an injected one)
    const child = spawnSync('bash', ['-c', `ulimit -f 16 && exec "${process.execPath}" -r ts-node/register/transpile-only bin/training-io.ts pack --content any "$0" "$1"`, source, output],
      { cwd: REPO, encoding: 'utf8', env: { ...process.env, TS_NODE_PROJECT: path.join(REPO, 'tsconfig.dev.json') } });

    // THEN
    expect(child.status).toBe(1);
    expect(child.stderr).toMatch(new RegExp(`${escapeRegExp(output)}/versions/v\\d{8}-[0-9a-f]{8}/shards/part-00000-of-00001\\.tfrecord: EFBIG`));
    expect(listFiles(output).filter((key) => key.endsWith('.partial') || key.startsWith('published/') || key === MANIFEST_KEY)).toEqual([]);
    const rerun = await runCli('pack', '--content', 'any', source, output);
    expect(rerun.code).toBe(0);
    expect(readManifest(output).records).toBe(40);
    expect(listFiles(output).filter((key) => key.endsWith('.partial'))).toEqual([]);
  }, 120_000);
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
