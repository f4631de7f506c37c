// Bundles every lambda/<handler>/index.ts into lambda/dist/<handler>/index.js.
// lib/ references the bundles as assets, so consumers never need esbuild or Docker to synth.
import { build } from 'esbuild';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const lambdaDir = new URL('../lambda/', import.meta.url).pathname;
const handlers = readdirSync(lambdaDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== 'dist')
  .map((entry) => entry.name)
  .filter((name) => existsSync(join(lambdaDir, name, 'index.ts')));

await Promise.all(handlers.map((name) => build({
  entryPoints: [join(lambdaDir, name, 'index.ts')],
  outfile: join(lambdaDir, 'dist', name, 'index.js'),
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'cjs',
  external: ['@aws-sdk/*'],
  sourcemap: 'inline',
  logLevel: 'warning',
})));
console.log(`bundled ${handlers.length} handler(s)${handlers.length ? `: ${handlers.join(', ')}` : ''}`);
