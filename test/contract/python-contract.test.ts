import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { DATASET_LAYOUT, VERSION_ID_PATTERN } from '../../lib/contract/dataset-layout';
import { S3_RETRY_RULE, THROTTLING_CODES, TRANSIENT_CODES } from '../../lib/contract/s3-retry-rule';
import { MAX_SHARD_BYTES } from '../../lib/contract/shard-limits';

// container/shardio/contract.py is generated from lib/contract/ (scripts/python-contract.mjs): the
// check regenerates it in memory and compares, so a change to lib/contract/ (the retry rule, the
// layout, the ceilings) without `npm run contract:python` fails here.

const ROOT = path.join(__dirname, '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'python-contract.mjs');
const MODULE = path.join(ROOT, 'container', 'shardio', 'contract.py');
const SHARDIO = path.join(ROOT, 'container', 'shardio');

function checkModule(module: string): void {
  execFileSync('node', [SCRIPT, '--check', '--module', module], { stdio: 'pipe' });
}

/** A copy of the module with `edit` applied, in a temporary folder. */
function editedCopy(edit: (text: string) => string): string {
  const copy = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'python-contract-')), 'contract.py');
  fs.writeFileSync(copy, edit(fs.readFileSync(MODULE, 'utf8')));
  return copy;
}

describe('the Python contract (container/shardio/contract.py)', () => {
  test('is generated from lib/contract/ as it is now (`npm run contract:python` regenerates it)', () => {
    expect(() => checkModule(MODULE)).not.toThrow();
  });

  test.each([
    ['the retry rule\'s attempts', (text: string) => text.replace(`"attempts": ${S3_RETRY_RULE.attempts}`, '"attempts": 5')],
    ['a throttling code', (text: string) => text.replace(`"${THROTTLING_CODES[0]}", `, '')],
    ['the version id\'s shape', (text: string) => text.replace(VERSION_ID_PATTERN, 'v\\\\d{8}-[0-9a-f]{8}')],
    ['a layout name', (text: string) => text.replace(`"${DATASET_LAYOUT.versions}"`, '"version/"')],
  ])('a module whose %s lags behind lib/contract/ is refused', (_, edit) => {
    // GIVEN
    const stale = editedCopy(edit);
    expect(fs.readFileSync(stale, 'utf8')).not.toEqual(fs.readFileSync(MODULE, 'utf8'));

    // THEN
    expect(() => checkModule(stale)).toThrow(/differs from lib\/contract\/; run `npm run contract:python`/);
    fs.rmSync(path.dirname(stale), { recursive: true });
  });

  test('carries the values of lib/contract/', () => {
    const text = fs.readFileSync(MODULE, 'utf8');
    expect(text).toContain(`S3_RETRY_RULE = {"attempts": ${S3_RETRY_RULE.attempts}, "budgetMs": ${S3_RETRY_RULE.budgetMs},`);
    expect(text).toContain(`MAX_SHARD_BYTES = ${MAX_SHARD_BYTES}\n`);
    expect(text).toContain(`VERSION_ID_PATTERN = "${VERSION_ID_PATTERN}"\n`);
    for (const code of [...THROTTLING_CODES, ...TRANSIENT_CODES]) expect(text).toContain(`"${code}"`);
  });

  test('the reader keeps no copy of its own: no layout name, ceiling, version id shape, retry number or S3 code outside contract.py', () => {
    // GIVEN: every module of shardio, its subpackages' included, but the contract
    const modules = fs.readdirSync(SHARDIO, { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.py') && name !== 'contract.py');
    expect(modules).toContain(path.join('source', 's3_objects.py'));
    const copies = [
      // a name assigned as a literal (`VERSIONS_FOLDER = "versions"`): the kinds of keys ("shards", "index") share words with them
      ...Object.values(DATASET_LAYOUT).map((name) => `= "${name.replace(/\/$/, '')}"`),
      ...[...THROTTLING_CODES, ...TRANSIENT_CODES].map((code) => `"${code}"`),
      '128 * 1024 * 1024', String(MAX_SHARD_BYTES), '\\d{8}', 'DEFAULT_ATTEMPTS = 5', '= 20.0',
    ];

    // WHEN
    const found = modules.flatMap((name) => {
      const text = fs.readFileSync(path.join(SHARDIO, name), 'utf8');
      return copies.filter((copy) => text.includes(copy)).map((copy) => `${name}: ${copy}`);
    });

    // THEN
    expect(found).toEqual([]);
  });

  test('the Node engine keeps no copy either: lambda/io/s3-retry.ts spells none of the contract\'s codes or numbers', () => {
    const text = fs.readFileSync(path.join(ROOT, 'lambda', 'io', 's3-retry.ts'), 'utf8');
    const copies = [...THROTTLING_CODES, ...TRANSIENT_CODES].map((code) => `'${code}'`)
      .concat(['60_000', '20_000', 'maxAttempts: 6', 'maxThrottledAttempts']);
    expect(copies.filter((copy) => text.includes(copy))).toEqual([]);
  });
});
