import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ERROR_CODES, WARNING_CODES } from '../../lib/private/error-codes';
import { sourceFiles } from '../support/import-graph';

const ROOT = path.join(__dirname, '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'validation-codes-doc.mjs');
const PAGE = path.join(ROOT, 'docs', 'validation-codes.md');

/** The library's sources, without the table itself. */
const LIB_TEXT = sourceFiles('lib').filter((file) => file !== 'lib/private/error-codes.ts')
  .map((file) => fs.readFileSync(path.join(ROOT, file), 'utf8')).join('\n');

function checkPage(page: string): void {
  execFileSync('node', [SCRIPT, '--check', '--page', page], { stdio: 'pipe' });
}

describe('the table of error and warning codes', () => {
  test('docs/validation-codes.md\'s tables are generated from it (`npm run docs:codes` updates them)', () => {
    expect(() => checkPage(PAGE)).not.toThrow();
  });

  test('a page whose tables lag behind the table is refused', () => {
    // GIVEN: the page without its first error row
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'error-codes-'));
    const stale = path.join(dir, 'validation-codes.md');
    const [code] = Object.keys(ERROR_CODES);
    fs.writeFileSync(stale, fs.readFileSync(PAGE, 'utf8').replace(new RegExp(`^\\| [^|]+ \\| \`${code}\` \\|.*\\n`, 'm'), ''));
    // THEN
    expect(() => checkPage(stale)).toThrow(/differ from lib\/private\/error-codes\.ts/);
    fs.rmSync(dir, { recursive: true });
  });

  test('lists no error code the library does not raise', () => {
    // ValidationError takes only the table's codes (its type), so every raised code is listed; here the other way round.
    expect(Object.keys(ERROR_CODES).filter((code) => !LIB_TEXT.includes(`'${code}'`))).toEqual([]);
  });

  test('lists every warning id the library raises, and no other', () => {
    // GIVEN: `cdk-training-io:<id>` warnings, and the planner's and the job's warnings by code
    const raised = new Set([
      ...[...LIB_TEXT.matchAll(/addWarningV2\('cdk-training-io:(\w+)'/g)].map((match) => match[1]),
      ...[...LIB_TEXT.matchAll(/\bcode: '(\w+)'/g)].map((match) => match[1]),
    ]);
    // THEN
    expect([...raised].sort()).toEqual(Object.keys(WARNING_CODES).sort());
  });
});
