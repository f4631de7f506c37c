// Writes the README's "Validated at synth time" tables from the one table of codes,
// lib/private/error-codes.ts. `node scripts/readme-error-codes.mjs` rewrites README.md;
// `--check` only exits 1 when README.md differs (test/private/error-codes.test.ts runs it so).
import { build } from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
// `--readme FILE` reads (and writes) another copy: the test checks that a stale one is caught.
const readmeFlag = process.argv.indexOf('--readme');
const readmePath = readmeFlag > 0 ? process.argv[readmeFlag + 1] : `${root}README.md`;
const START = '<!-- error-codes:start (generated from lib/private/error-codes.ts by `node scripts/readme-error-codes.mjs`) -->';
const END = '<!-- error-codes:end -->';

/** The module's exports, compiled in memory (it imports nothing). */
async function loadCodes() {
  const { outputFiles } = await build({
    entryPoints: [`${root}lib/private/error-codes.ts`], bundle: true, write: false, format: 'cjs', platform: 'node', logLevel: 'silent',
  });
  const module = { exports: {} };
  new Function('module', 'exports', 'require', outputFiles[0].text)(module, module.exports, createRequire(import.meta.url));
  return module.exports;
}

/** One table, rows in the table's order (grouped by subject there). */
function table(heading, entries) {
  const rows = Object.entries(entries).map(([code, { subject, meaning }]) => `| \`${subject}\` | \`${code}\` | ${meaning} |`);
  return [`| Construct | ${heading} | What |`, '|---|---|---|', ...rows].join('\n');
}

function renderSection({ ERROR_CODES, WARNING_CODES }) {
  return [
    START,
    'Errors (`[Code] message`, refused at synth time):',
    '',
    table('Error', ERROR_CODES),
    '',
    'Warnings (`cdk-training-io:<id>`, and the I/O plan\'s warnings under the same ids):',
    '',
    table('Warning', WARNING_CODES),
    END,
  ].join('\n');
}

const readme = readFileSync(readmePath, 'utf8');
const start = readme.indexOf(START);
const end = readme.indexOf(END);
if (start < 0 || end < start) {
  console.error(`${readmePath} has no "${START}" … "${END}" section`);
  process.exit(1);
}
const updated = readme.slice(0, start) + renderSection(await loadCodes()) + readme.slice(end + END.length);
if (process.argv.includes('--check')) {
  if (updated !== readme) {
    console.error(`${readmePath}: the "Validated at synth time" tables differ from lib/private/error-codes.ts; run \`node scripts/readme-error-codes.mjs\``);
    process.exit(1);
  }
} else if (updated !== readme) {
  writeFileSync(readmePath, updated);
}
