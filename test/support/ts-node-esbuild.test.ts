import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { temporaryFolders } from './local-files';

const REPO = path.resolve(__dirname, '..', '..');
const folder = temporaryFolders();

/** A TypeScript module with types to strip, a class field and an error thrown on its line 9. */
const MODULE = `interface Shard { readonly key: string; readonly records: number }
class Counter {
  private total = 0;
  public add(shard: Shard): number { return (this.total += shard.records); }
}
const counter = new Counter();
counter.add({ key: 'a', records: 2 } as Shard);
process.stdout.write(String(counter.add({ key: 'b', records: 3 })));
throw new Error('from line 9');
`;

describe('ts-node through esbuild (test/support/ts-node-esbuild.js, as the global setup sets it)', () => {
  test('runs TypeScript as ts-node does with the TypeScript transpiler, and a stack trace names the line in the .ts file', () => {
    // GIVEN
    const file = path.join(folder('ts-node-esbuild'), 'module.ts');
    fs.writeFileSync(file, MODULE);
    // WHEN
    const run = spawnSync(process.execPath, ['--require', 'ts-node/register/transpile-only', file], {
      cwd: REPO, encoding: 'utf8', env: { ...process.env, TS_NODE_PROJECT: path.join(__dirname, 'tsconfig.ts-node.json') },
    });
    // THEN
    expect(run.stdout).toBe('5');
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`${file}:9:7`);
    expect(run.stderr).toContain('Error: from line 9');
  });

  test('transpiles with esbuild: esbuild is loaded once a .ts file is', () => {
    // GIVEN
    const file = path.join(folder('ts-node-esbuild'), 'loaded.ts');
    fs.writeFileSync(file, 'const loaded: string[] = Object.keys(require.cache);\n'
      + 'process.stdout.write(String(loaded.some((module) => module.includes(`${"/"}node_modules${"/"}esbuild${"/"}`))));\n');
    // WHEN
    const run = spawnSync(process.execPath, ['--require', 'ts-node/register/transpile-only', file], {
      cwd: REPO, encoding: 'utf8', env: { ...process.env, TS_NODE_PROJECT: path.join(__dirname, 'tsconfig.ts-node.json') },
    });
    // THEN
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('true');
  });
});
