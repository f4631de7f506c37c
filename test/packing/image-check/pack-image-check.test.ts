import * as fs from 'node:fs';
import * as fc from 'fast-check';
import { LocalDirectorySink, LocalDirectorySource } from '../../../lambda/io/local-directory';
import type { PackOptions } from '../../../lambda/packing/pack';
import { packDataset } from '../../../lambda/packing/pack';
import { temporaryFolders, writeFiles } from '../../support/local-files';
import { readerProblems, writeProbeCorpus } from './probe-corpus';

const folder = temporaryFolders();

async function pack(source: string, options: Partial<PackOptions> = {}) {
  const output = folder('out');
  // allowMissing: the tests read the failures from the manifest, which a run with failures publishes only then.
  const result = await packDataset({
    source: new LocalDirectorySource(source), sink: new LocalDirectorySink(output), format: 'tfrecord', seed: 3, allowMissing: true, ...options,
  });
  return { ...result, output };
}

describe('packing with the image check', () => {
  let corpus: Map<string, Buffer>;
  beforeAll(() => {
    corpus = writeProbeCorpus(folder('corpus'));
  });

  /** The corpus in one class folder. */
  function corpusSource(): string {
    const dir = folder('src');
    writeFiles(dir, Object.fromEntries([...corpus].map(([name, data]) => [`probe/${name}`, data])));
    return dir;
  }

  test('content images: every bad file is a listed failure with its reason, every valid one a record the readers decode without a problem', async () => {
    // WHEN
    const { manifest, output } = await pack(corpusSource(), { content: 'images' });

    // THEN
    const bad = [...corpus.keys()].filter((name) => !name.startsWith('ok-')).map((name) => `probe/${name}`).sort();
    expect(manifest.failures.map((failure) => failure.key)).toEqual(bad);
    for (const failure of manifest.failures) expect(failure.reason).toMatch(/^(not an image|unsupported image format|truncated|corrupt|image too large)/);
    const decoded = readerProblems(output);
    expect([...decoded.keys()].sort()).toEqual([...corpus.keys()].filter((name) => name.startsWith('ok-')).map((name) => `probe/${name}`).sort());
    for (const [name, problems] of decoded) expect([name, problems]).toEqual([name, []]);
  });

  test('content any (the engine\'s default): every file is a record, and the readers cannot decode the bad ones (the check is what refuses them)', async () => {
    // WHEN
    const { manifest, output } = await pack(corpusSource());

    // THEN
    expect(manifest.failures).toEqual([]);
    const decoded = readerProblems(output);
    expect(decoded.get('probe/bad-cut-with-eoi.jpg')).toEqual([expect.stringMatching(/^libjpeg: .*premature end of data segment/i)]);
    expect(decoded.get('probe/bad-text.jpg')).toEqual(expect.arrayContaining([expect.stringMatching(/^Pillow: cannot identify image file/)]));
  });

  test('property: whatever passes the check decodes with Pillow and torchvision, with no premature end (random cuts, flips, deletions of valid JPEGs and PNGs)', async () => {
    const bases = ['ok-small.jpg', 'ok-optimized.jpg', 'ok-444.jpg', 'ok-gray.jpg', 'ok-rgb.png', 'ok-palette.png'].map((name) => corpus.get(name)!);
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant('cut' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), endMarker: fc.boolean() }),
      fc.record({ kind: fc.constant('set' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), value: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant('delete' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), length: fc.integer({ min: 1, max: 64 }) }),
    );
    const file = fc.record({ base: fc.integer({ min: 0, max: bases.length - 1 }), mutations: fc.array(mutation, { minLength: 1, maxLength: 3 }) });
    await fc.assert(fc.asyncProperty(fc.array(file, { minLength: 30, maxLength: 30 }), async (files) => {
      // GIVEN
      const dir = folder('src');
      writeFiles(dir, Object.fromEntries(files.map((spec, i) => [`c/${i}.img`, mutate(bases[spec.base], spec.mutations)])));

      // WHEN
      const { manifest, output } = await pack(dir, { content: 'images' });

      // THEN
      const decoded = readerProblems(output);
      expect(decoded.size + manifest.failures.length).toBe(files.length);
      for (const [name, problems] of decoded) expect([name, problems]).toEqual([name, []]);
      fs.rmSync(dir, { recursive: true });
      fs.rmSync(output, { recursive: true });
    }), { numRuns: 5 });
  });
});

type Mutation = { kind: 'cut'; at: number; endMarker: boolean } | { kind: 'set'; at: number; value: number } | { kind: 'delete'; at: number; length: number };

function mutate(data: Buffer, mutations: Mutation[]): Buffer {
  let bytes = Buffer.from(data);
  for (const m of mutations) {
    const at = Math.min(bytes.length - 1, Math.floor(m.at * bytes.length));
    if (m.kind === 'cut') bytes = Buffer.concat([bytes.subarray(0, at), m.endMarker ? Buffer.from([0xff, 0xd9]) : Buffer.alloc(0)]);
    else if (m.kind === 'set') bytes[at] = m.value;
    else bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + m.length)]);
  }
  return bytes;
}
