// Writes the tables of docs/validation-codes.md from the one table of codes,
// lib/private/error-codes.ts. `node scripts/validation-codes-doc.mjs` (`npm run docs:codes`) rewrites
// the page; `--check` only exits 1 when it differs (test/private/error-codes.test.ts runs it so).
import { build } from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
// `--page FILE` reads (and writes) another copy: the test checks that a stale one is caught.
const pageFlag = process.argv.indexOf('--page');
const pagePath = pageFlag > 0 ? process.argv[pageFlag + 1] : `${root}docs/validation-codes.md`;
const START = '<!-- error-codes:start (generated from lib/private/error-codes.ts by `npm run docs:codes`) -->';
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

const page = readFileSync(pagePath, 'utf8');
const start = page.indexOf(START);
const end = page.indexOf(END);
if (start < 0 || end < start) {
  console.error(`${pagePath} has no "${START}" … "${END}" section`);
  process.exit(1);
}
const updated = page.slice(0, start) + renderSection(await loadCodes()) + page.slice(end + END.length);
if (process.argv.includes('--check')) {
  if (updated !== page) {
    console.error(`${pagePath}: the tables of codes differ from lib/private/error-codes.ts; run \`npm run docs:codes\``);
    process.exit(1);
  }
} else if (updated !== page) {
  writeFileSync(pagePath, updated);
}
