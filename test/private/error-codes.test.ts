import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ERROR_CODES, WARNING_CODES } from '../../lib/private/error-codes';
import { sourceFiles } from '../support/import-graph';

const ROOT = path.join(__dirname, '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'readme-error-codes.mjs');

/** The library's sources, without the table itself. */
const LIB_TEXT = sourceFiles('lib').filter((file) => file !== 'lib/private/error-codes.ts')
  .map((file) => fs.readFileSync(path.join(ROOT, file), 'utf8')).join('\n');

function checkReadme(readme: string): void {
  execFileSync('node', [SCRIPT, '--check', '--readme', readme], { stdio: 'pipe' });
}

describe('the table of error and warning codes', () => {
  test('README.md\'s "Validated at synth time" tables are generated from it (`npm run readme:codes` updates them)', () => {
    expect(() => checkReadme(path.join(ROOT, 'README.md'))).not.toThrow();
  });

  test('a README whose tables lag behind the table is refused', () => {
    // GIVEN: the README without its first error row
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'error-codes-'));
    const stale = path.join(dir, 'README.md');
    const [code] = Object.keys(ERROR_CODES);
    fs.writeFileSync(stale, fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').replace(new RegExp(`^\\| [^|]+ \\| \`${code}\` \\|.*\\n`, 'm'), ''));
    // THEN
    expect(() => checkReadme(stale)).toThrow(/differ from lib\/private\/error-codes\.ts/);
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
