const fs = require('node:fs');
const path = require('node:path');

/**
 * The suites' two tiers, decided from what they load rather than from a list kept by hand: a suite is
 * `full` when it, or any module of this repository it loads (transitively), may start a process, a
 * worker thread or a server: it imports `child_process`, `worker_threads` or `cluster`, creates a
 * server, or uses a package that starts a process of its own (the S3 test server, esbuild's
 * service, cfn-guard). Every other suite is `fast`: `npm run test:fast` runs those
 * (jest.fast.config.js), `npm test` runs both. A new suite that starts a server, the CLI's pack (its
 * worker threads), Python or a build lands in `full` without anyone listing it; what it imports only
 * for its types (erased at compile time) does not count.
 */

const ROOT = path.join(__dirname, '..', '..');

/** Node modules whose use starts a process or a thread. */
const PROCESS_MODULES = new Set(['child_process', 'worker_threads', 'cluster']);

/** Packages that start a process or a server of their own when used. */
const STARTING_PACKAGES = new Set(['s3rver', 'esbuild', '@cdklabs/cdk-validator-cfnguard']);

/** A server of the suite's own, on loopback. */
const SERVER_CALL = /\bcreateServer\(/;

/**
 * `import … from '…'`, `export … from '…'` (over several lines), bare `import '…'`, `require('…')` and
 * `import('…')`: the specifier, and the import clause where there is one (to tell type-only imports).
 */
const IMPORTS = [
  /^\s*(?:import|export)\s+(type\s+)?([^;]*?)\s+from\s+['"]([^'"]+)['"]/gms,
  /^\s*import\s+()()['"]([^'"]+)['"]/gm,
  /\b(?:require|import)\(\s*()()['"]([^'"]+)['"]\s*\)/g,
];

/** Whether an import clause names types only: `import type { A }`, `import { type A, type B }`. */
function typeOnly(typeKeyword, clause) {
  if (typeKeyword) return true;
  const names = /^\{([^}]*)\}$/s.exec(clause.trim());
  return names !== null && names[1].split(',').map((name) => name.trim()).filter(Boolean).every((name) => name.startsWith('type '));
}

/** The package or node module an import names: `node:fs/promises` → `fs`, `@scope/pkg/sub` → `@scope/pkg`. */
function moduleName(specifier) {
  const bare = specifier.replace(/^node:/, '');
  const parts = bare.split('/');
  return bare.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** The repository file a relative import names (`.ts`, `.js`, `.mjs`, or a folder's index), or undefined. */
function resolveRelative(from, specifier, exists) {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const candidates = [base, `${base}.ts`, `${base}.js`, `${base}.mjs`, `${base}/index.ts`, `${base}/index.js`];
  return candidates.find((candidate) => /\.(ts|js|mjs)$/.test(candidate) && exists(candidate));
}

/** The value imports of one file's source: repository files (relative) and packages. */
function valueImports(file, source, exists) {
  const files = [];
  const packages = [];
  for (const pattern of IMPORTS) {
    for (const [, typeKeyword, clause, specifier] of source.matchAll(pattern)) {
      if (typeOnly(typeKeyword, clause ?? '')) continue;
      if (specifier.startsWith('.')) {
        const target = resolveRelative(file, specifier, exists);
        if (target) files.push(target);
      } else {
        packages.push(moduleName(specifier));
      }
    }
  }
  return { files, packages };
}

/** Why one file, alone, may start something; undefined when it does not. */
function startsSomething(source, packages) {
  const module = packages.find((name) => PROCESS_MODULES.has(name));
  if (module) return `imports ${module}`;
  const started = packages.find((name) => STARTING_PACKAGES.has(name));
  if (started) return `uses ${started}, which starts a process`;
  return SERVER_CALL.test(source) ? 'starts a server (createServer)' : undefined;
}

/**
 * A suite's tier and, for `full`, the chain of imports to the module that starts something.
 * `read(file)` gives a repository file's source (paths relative to the repository, with `/`).
 */
function classifySuite(suite, read = readRepositoryFile, exists = repositoryFileExists) {
  const seen = new Set([suite]);
  const queue = [[suite]];
  while (queue.length) {
    const chain = queue.shift();
    const file = chain[chain.length - 1];
    const source = read(file);
    const imports = valueImports(file, source, exists);
    const why = startsSomething(source, imports.packages);
    if (why) return { tier: 'full', why: `${chain.join(' → ')} ${why}` };
    for (const next of imports.files) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push([...chain, next]);
    }
  }
  return { tier: 'fast' };
}

function readRepositoryFile(file) {
  return fs.readFileSync(path.join(ROOT, file), 'utf8');
}

function repositoryFileExists(file) {
  return fs.existsSync(path.join(ROOT, file)) && fs.statSync(path.join(ROOT, file)).isFile();
}

/** Every suite of the repository (`test/**\/*.test.ts`), relative to the repository, sorted. */
function allSuites() {
  const walk = (dir) => fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const child = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(child);
    return entry.name.endsWith('.test.ts') ? [child] : [];
  });
  return walk('test').sort();
}

/** The suites of one tier, relative to the repository. */
function suitesOf(tier) {
  return allSuites().filter((suite) => classifySuite(suite).tier === tier);
}

module.exports = { allSuites, classifySuite, suitesOf, ROOT };
