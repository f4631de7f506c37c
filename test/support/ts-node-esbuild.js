const { transformSync } = require('esbuild');

/**
 * A ts-node transpiler (`"ts-node": { "transpiler": ... }` in test/support/tsconfig.ts-node.json)
 * that strips the types with esbuild, as scripts/bundle-lambdas.mjs does for the handlers, instead
 * of TypeScript's transpileModule: a worker thread of the CLI's pack, started under jest with
 * `--require ts-node/register/transpile-only`, loads the engine's sources in a third of the
 * CPU time or less (each thread compiles them anew; tests start some hundred such threads). Type checking
 * is `npm run typecheck`'s, as for the rest of the tests.
 */
module.exports.create = function create({ service }) {
  const { experimentalDecorators, useDefineForClassFields } = service.config.options;
  return {
    transpile(input, { fileName }) {
      const { code, map } = transformSync(input, {
        loader: fileName.endsWith('.tsx') ? 'tsx' : 'ts',
        format: 'cjs',
        target: 'es2022',
        sourcefile: fileName,
        sourcemap: 'external',
        tsconfigRaw: { compilerOptions: { experimentalDecorators, useDefineForClassFields } },
      });
      return { outputText: code, sourceMapText: map };
    },
  };
};
