import * as fs from 'fs';
import * as path from 'path';
import { importCircles, importsOf, loadedBy, sourceFiles, valueGraph } from '../support/import-graph';

// The layering rules of ARCHITECTURE.md "Layers", checked on the sources' import lines.

const LIB = sourceFiles('lib');
const LIB_GRAPH = valueGraph(LIB);

/** The engines: they know nothing of Lambda, and the handlers and the CLI call them. */
const ENGINES = ['lambda/packing/', 'lambda/diagnosis/'];
/** Storage I/O (S3 and local folders), under the engines: packing, the diagnoser and the CLI use it. */
const IO = 'lambda/io/';
/** The handler folders: `lambda/<handler>/index.ts`, each an adapter around an engine. */
const HANDLERS = fs.readdirSync(path.join(__dirname, '..', '..', 'lambda'))
  .filter((name) => fs.existsSync(path.join(__dirname, '..', '..', 'lambda', name, 'index.ts')))
  .map((name) => `lambda/${name}/`);
/** What the handlers share: event and environment checks, the packing run's working files. Not a handler (no index.ts). */
const HANDLER_KIT = 'lambda/handler-kit/';

/** What constructs and the planner share (ARCHITECTURE.md "Layers"): the contract, the constructs' vocabulary, the hardware vocabulary, lib/private. */
const LEAVES = ['lib/contract/', 'lib/vocabulary/', 'lib/instances/', 'lib/private/'];
/** The folders of constructs: the planner imports none of them, type-only imports included. */
const CONSTRUCT_FOLDERS = ['lib/sharding/', 'lib/storage/', 'lib/training/', 'lib/pipeline/'];

/** A construct module: one that loads the `constructs` package to extend its classes. */
function isConstructModule(file: string): boolean {
  return importsOf(file).some((edge) => edge.target === 'constructs' && !edge.typeOnly);
}

describe('import checks', () => {
  test('find a circle and the files a module loads', () => {
    // GIVEN: a → b → c → a, and d → a
    const graph = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]);
    // THEN
    expect(importCircles(graph)).toEqual([['a', 'b', 'c']]);
    expect(importCircles(new Map([['a', ['b']], ['b', []]]))).toEqual([]);
    expect([...loadedBy(graph, ['d'])].sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  test('tell type-only imports from value imports', () => {
    expect(importsOf('lib/instances/training-cluster.ts')).toEqual([
      { target: 'aws-cdk-lib', typeOnly: true },
      { target: 'lib/instances/training-instance.ts', typeOnly: true },
    ]);
    expect(importsOf('lib/private/validation.ts')).toContainEqual({ target: 'lib/private/errors.ts', typeOnly: false });
  });
});

describe('layers', () => {
  test('lib/ has no import circle other than type-only ones', () => {
    expect(importCircles(LIB_GRAPH)).toEqual([]);
  });

  test('the planner (lib/planning) loads no construct module', () => {
    // WHEN
    const loaded = [...loadedBy(LIB_GRAPH, LIB.filter((file) => file.startsWith('lib/planning/')))];
    // THEN
    expect(loaded.filter(isConstructModule)).toEqual([]);
  });

  test('the planner (lib/planning) imports from lib/ only itself and the leaves, type-only imports included', () => {
    // GIVEN: every import line of the planner into lib/
    const beyondLeaves = LIB.filter((file) => file.startsWith('lib/planning/')).flatMap((file) => importsOf(file)
      .filter((edge) => edge.target.startsWith('lib/') && !edge.target.startsWith('lib/planning/'))
      .filter((edge) => !LEAVES.some((leaf) => edge.target.startsWith(leaf)))
      .map((edge) => `${file} → ${edge.target}`));
    // THEN
    expect(beyondLeaves).toEqual([]);
  });

  test('the planner (lib/planning) imports nothing from a construct folder', () => {
    const intoConstructs = LIB.filter((file) => file.startsWith('lib/planning/')).flatMap((file) => importsOf(file)
      .filter((edge) => CONSTRUCT_FOLDERS.some((folder) => edge.target.startsWith(folder)))
      .map((edge) => `${file} → ${edge.target}`));
    expect(intoConstructs).toEqual([]);
  });

  test('the vocabulary (lib/vocabulary) imports nothing but aws-cdk-lib types and the contract', () => {
    const outside = sourceFiles('lib/vocabulary').flatMap((file) => importsOf(file)
      .filter((edge) => !edge.target.startsWith('lib/vocabulary/') && !edge.target.startsWith('lib/contract/') && !(edge.target === 'aws-cdk-lib' && edge.typeOnly))
      .map((edge) => `${file} → ${edge.target}`));
    expect(sourceFiles('lib/vocabulary').length).toBeGreaterThan(0);
    expect(outside).toEqual([]);
  });

  test('the engine takes its record vocabulary from the contract: no union of the names is spelled out in lambda/ or bin/', () => {
    // GIVEN: the unions the engine used to declare itself
    const spelled = /'(tfrecord' \| 'recordio|folder' \| 'none|images' \| 'any)'/;
    // WHEN
    const declaring = [...sourceFiles('lambda'), ...sourceFiles('bin')]
      .filter((file) => spelled.test(fs.readFileSync(path.join(__dirname, '..', '..', file), 'utf8')));
    // THEN
    expect(declaring).toEqual([]);
  });

  test('the contract (lib/contract) imports nothing outside itself', () => {
    const outside = sourceFiles('lib/contract').flatMap((file) => importsOf(file)
      .filter((edge) => !edge.target.startsWith('lib/contract/'))
      .map((edge) => `${file} → ${edge.target}`));
    expect(outside).toEqual([]);
  });

  test('lib/ imports neither lambda/ nor container/ (the handlers are bundled assets)', () => {
    const crossing = LIB.flatMap((file) => importsOf(file)
      .filter((edge) => edge.target.startsWith('lambda/') || edge.target.startsWith('container/'))
      .map((edge) => `${file} → ${edge.target}`));
    expect(crossing).toEqual([]);
  });
});

describe('engines and adapters', () => {
  test('bin/ imports the engines and storage I/O, never a handler folder', () => {
    const crossing = sourceFiles('bin').flatMap((file) => importsOf(file)
      .filter((edge) => edge.target.startsWith('lambda/') && ![...ENGINES, IO].some((layer) => edge.target.startsWith(layer)))
      .map((edge) => `${file} → ${edge.target}`));
    expect(crossing).toEqual([]);
  });

  test('storage I/O (lambda/io) imports nothing of lambda/ outside itself (no engine, no handler) and of lib/ only the contract', () => {
    // GIVEN
    const files = sourceFiles(IO.replace(/\/$/, ''));
    // WHEN
    const crossing = files.flatMap((file) => importsOf(file)
      .filter((edge) => (edge.target.startsWith('lambda/') && !edge.target.startsWith(IO))
        || (edge.target.startsWith('lib/') && !edge.target.startsWith('lib/contract/')))
      .map((edge) => `${file} → ${edge.target}`));
    // THEN
    expect(files).toEqual(expect.arrayContaining(['lambda/io/s3-sink.ts', 'lambda/io/key-order.ts', 'lambda/io/s3-checksum.ts']));
    expect(crossing).toEqual([]);
  });

  test('the engines import no handler folder', () => {
    const crossing = ENGINES.flatMap((engine) => sourceFiles(engine.replace(/\/$/, ''))).flatMap((file) => importsOf(file)
      .filter((edge) => HANDLERS.some((handler) => edge.target.startsWith(handler)))
      .map((edge) => `${file} → ${edge.target}`));
    expect(crossing).toEqual([]);
  });

  test('every handler folder is a thin adapter (300 lines at most)', () => {
    // GIVEN
    const lines = (folder: string) => sourceFiles(folder.replace(/\/$/, ''))
      .reduce((sum, file) => sum + fs.readFileSync(path.join(__dirname, '..', '..', file), 'utf8').split('\n').length, 0);
    // WHEN
    const thick = HANDLERS.filter((folder) => lines(folder) > 300);
    // THEN
    expect(HANDLERS).toEqual(expect.arrayContaining(['lambda/job-diagnoser/', 'lambda/shard-packer/', 'lambda/shard-planner/']));
    expect(thick).toEqual([]);
  });

  test('the handler kit is shared by handlers and imports none of them, nor does one handler import another', () => {
    // GIVEN
    const kit = sourceFiles(HANDLER_KIT.replace(/\/$/, ''));
    // WHEN
    const kitCrossing = kit.flatMap((file) => importsOf(file)
      .filter((edge) => HANDLERS.some((handler) => edge.target.startsWith(handler)))
      .map((edge) => `${file} → ${edge.target}`));
    const handlerCrossing = HANDLERS.flatMap((handler) => sourceFiles(handler.replace(/\/$/, '')).flatMap((file) => importsOf(file)
      .filter((edge) => HANDLERS.some((other) => other !== handler && edge.target.startsWith(other)))
      .map((edge) => `${file} → ${edge.target}`)));
    // THEN
    expect(HANDLERS).not.toContain(HANDLER_KIT);
    expect(kit.length).toBeGreaterThan(0);
    expect(kitCrossing).toEqual([]);
    expect(handlerCrossing).toEqual([]);
  });
});
