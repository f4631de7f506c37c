// Writes container/shardio/contract.py, the Python reader's copy of the contract, from the one
// definition in lib/contract/ (the layout's names, the version id's shape, the shard ceilings, the JSON
// limits, the S3 retry rule and its codes). `node scripts/python-contract.mjs` (`npm run contract:python`) rewrites
// it; `--check` only exits 1 when it differs (test/contract/python-contract.test.ts runs it so).
import { build } from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
// `--module FILE` reads (and writes) another copy: the test checks that a stale one is caught.
const moduleFlag = process.argv.indexOf('--module');
const modulePath = moduleFlag > 0 ? process.argv[moduleFlag + 1] : `${root}container/shardio/contract.py`;

/** The exports carried into Python, by source file, under the same names. */
const SOURCES = {
  'lib/contract/dataset-layout.ts': ['DATASET_LAYOUT', 'VERSION_ID_PATTERN', 'VERSION_SEQUENCE_DIGITS'],
  'lib/contract/shard-limits.ts': ['MIN_SHARD_BYTES', 'DEFAULT_SHARD_BYTES', 'MAX_SHARD_BYTES'],
  'lib/contract/s3-retry-rule.ts': ['S3_RETRY_RULE', 'S3_RETRY_SECONDS_ENV', 'THROTTLING_CODES', 'TRANSIENT_CODES'],
  'lib/contract/json-limits.ts': ['MAX_JSON_DEPTH', 'MAX_JSON_BYTES'],
  'lib/contract/sample-parts.ts': ['SAMPLE_KEY_FEATURE', 'PART_KINDS', 'PART_KIND_EXTENSIONS'],
};

const HEADER = `"""The contract between the TypeScript side and this reader, generated from lib/contract/ by
\`npm run contract:python\` (scripts/python-contract.mjs): do not edit; change lib/contract/ and
regenerate. test/contract/python-contract.test.ts fails while the two differ.

The layout's names and the version id's shape (layout.py builds the keys from them), the shard and
record ceilings (records.py), the JSON limits (json_limits.py), the multi-part sample's key feature and
part kinds (lib/contract/sample-parts.ts), and the S3 retry rule with its codes
(s3_objects.py): what the rule is,
and where the two languages deliberately differ, is said in lib/contract/s3-retry-rule.ts.
"""
`;

/** A module's exports, compiled in memory. */
async function loadExports(file) {
  const { outputFiles } = await build({
    entryPoints: [`${root}${file}`], bundle: true, write: false, format: 'cjs', platform: 'node', logLevel: 'silent',
  });
  const module = { exports: {} };
  new Function('module', 'exports', 'require', outputFiles[0].text)(module, module.exports, createRequire(import.meta.url));
  return module.exports;
}

/** The doc comment right above `export const name` in the source, as plain lines. */
function docComment(source, name) {
  const match = new RegExp(`/\\*\\*((?:(?!\\*/)[\\s\\S])*)\\*/\\s*export const ${name}\\b`).exec(source);
  if (!match) return [];
  const lines = match[1].split('\n').map((line) => line.replace(/^\s*(?:\* ?)?/, '').trimEnd());
  return lines.filter((line, i) => line !== '' || (i > 0 && i < lines.length - 1));
}

/** A value as a Python literal: numbers, ASCII strings, arrays (tuples) and plain objects (dicts). */
function pythonLiteral(value, name) {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`${name}: ${value} has no Python literal`);
    return String(value);
  }
  if (typeof value === 'string') {
    if (!/^[\x20-\x7e]*$/.test(value)) throw new Error(`${name}: ${JSON.stringify(value)} is not printable ASCII`);
    return JSON.stringify(value);
  }
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (Array.isArray(value)) return `(${value.map((item) => pythonLiteral(item, name)).join(', ')}${value.length === 1 ? ',' : ''})`;
  if (value && typeof value === 'object') {
    return `{${Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${pythonLiteral(item, `${name}.${key}`)}`).join(', ')}}`;
  }
  throw new Error(`${name}: a ${typeof value} has no Python literal`);
}

/** `NAME = literal`, wrapped at 120 columns after commas, then the doc comment as a docstring. */
function assignment(name, value, doc) {
  const lines = [];
  let line = `${name} = `;
  const indent = ' '.repeat(4);
  for (const piece of pythonLiteral(value, name).split(/(?<=, )/)) {
    if (line.length + piece.length > 120 && line.trim() !== '') {
      lines.push(line.trimEnd());
      line = indent;
    }
    line += piece;
  }
  lines.push(line);
  if (doc.length > 0) lines.push(`"""${doc.join('\n').replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"')}"""`);
  return lines.join('\n');
}

async function render() {
  const sections = [HEADER];
  for (const [file, names] of Object.entries(SOURCES)) {
    const exports = await loadExports(file);
    const source = readFileSync(`${root}${file}`, 'utf8');
    sections.push(`# ${file}`);
    for (const name of names) {
      if (!(name in exports)) throw new Error(`${file} exports no ${name}`);
      sections.push(assignment(name, exports[name], docComment(source, name)));
    }
  }
  return `${sections.join('\n\n')}\n`;
}

const updated = await render();
let current = '';
try {
  current = readFileSync(modulePath, 'utf8');
} catch {
  // none yet: --check reports it, a run writes it
}
if (process.argv.includes('--check')) {
  if (updated !== current) {
    console.error(`${modulePath} differs from lib/contract/; run \`npm run contract:python\``);
    process.exit(1);
  }
} else if (updated !== current) {
  writeFileSync(modulePath, updated);
}
