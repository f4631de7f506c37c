import { importCircles, importsOf, loadedBy, sourceFiles, valueGraph } from '../support/import-graph';

// The layering rules of ARCHITECTURE.md "Layers", checked on the sources' import lines.

const LIB = sourceFiles('lib');
const LIB_GRAPH = valueGraph(LIB);

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
