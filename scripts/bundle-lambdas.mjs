// Bundles every lambda/<handler>/index.ts into lambda/dist/<handler>/index.js.
// lib/ references the bundles as assets, so consumers never need esbuild or Docker to synth.
//
// `node scripts/bundle-lambdas.mjs` always bundles; `--if-stale` only when a bundle is missing or
// older than the sources (cdk.json's app command and jest's global setup run it that way).
import { build } from 'esbuild';
import {
  copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, utimesSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const lambdaDir = join(root, 'lambda');
const distDir = join(lambdaDir, 'dist');
// Each handler is bundled here first, then only what differs is moved into distDir (syncFolder). At
// the depth of distDir: the source map's paths, relative to the bundle, come out the same.
const stagingDir = join(lambdaDir, '.dist-staging');

// The packers run on x86_64 Lambda (glibc). esbuild cannot bundle a native addon (`No loader is
// configured for ".node" files`), so @node-rs/crc32 is replaced by a one-line module that loads
// the addon's linux-x64-gnu binary, copied next to index.js.
const CRC32_BINARY = 'crc32.linux-x64-gnu.node';
const CRC32_BINARY_PACKAGE = '@node-rs/crc32-linux-x64-gnu';

const nativeCrc32 = {
  name: 'native-crc32',
  setup(builder) {
    builder.onResolve({ filter: /^@node-rs\/crc32$/ }, () => ({ path: 'crc32', namespace: 'native-crc32' }));
    // One copy of the addon per process: where the package is installed (the tests, which load the
    // engine and several bundles into one process), its copy; a second copy of this napi-rs addon in
    // one process crashed it (a call through a null function pointer, seen in a core dump). On Lambda
    // the package is absent and the bundled copy loads.
    builder.onLoad({ filter: /.*/, namespace: 'native-crc32' }, () => ({
      contents: `try { module.exports = require('${CRC32_BINARY_PACKAGE}'); } catch { module.exports = require('./${CRC32_BINARY}'); }`,
      loader: 'js',
    }));
    builder.onResolve({ filter: new RegExp(`^${CRC32_BINARY_PACKAGE}$`) }, (args) => ({ path: args.path, external: true }));
    builder.onResolve({ filter: /\.node$/ }, (args) => ({ path: args.path, external: true }));
  },
};

// sharp (image preprocessing, issue 26) is a native addon with its libvips beside it: it stays
// external, and the packer, the one handler that preprocesses, gets sharp, its linux-x64 glibc
// binaries and its runtime dependencies copied into lambda/dist/shard-packer/node_modules/, where
// Node finds them on Lambda (the engine loads sharp only when preprocessing is asked for). So the
// asset is complete at build time and `cdk synth` needs no network and no Docker.
// Only x86_64: `npm ci` on an x64 machine installs the x64 binaries alone (optional dependencies
// are filtered by os and cpu), so arm64 (Graviton) packers would need @img/sharp-linux-arm64 and
// its libvips fetched at build time, which an offline CI cannot do. The packers stay x86_64.
const SHARP_BINARY_PACKAGES = ['@img/sharp-linux-x64', '@img/sharp-libvips-linux-x64'];
const SHARP_REQUIRE = /\brequire\(["']sharp["']\)/;
const SHARP_HANDLERS = ['shard-packer'];

/** sharp's folder and those of what it loads at run time on linux-x64: name → folder, resolved as Node resolves them from sharp. */
function sharpRuntimePackages() {
  const fromRoot = createRequire(join(root, 'package.json'));
  const folders = new Map();
  const add = (name, requireFrom) => {
    if (folders.has(name)) return;
    // Node's lookup paths, not require.resolve: these packages' "exports" hide their package.json.
    const folder = (requireFrom.resolve.paths(name) ?? []).map((path) => join(path, name)).find((path) => existsSync(join(path, 'package.json')));
    if (!folder) {
      throw new Error(`${name} is not installed; the x86_64 packer bundle needs it: npm install --no-save --os=linux --cpu=x64 `
        + `--libc=glibc ${SHARP_BINARY_PACKAGES.join(' ')}`);
    }
    folders.set(name, folder);
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
    const requireHere = createRequire(join(realpathSync(folder), 'package.json'));
    for (const dependency of Object.keys(manifest.dependencies ?? {})) add(dependency, requireHere);
  };
  add('sharp', fromRoot);
  for (const name of SHARP_BINARY_PACKAGES) add(name, createRequire(join(realpathSync(folders.get('sharp')), 'package.json')));
  return folders;
}

/** Copies sharp and what it loads into the bundle's node_modules/, flat (each package once), without their own nested node_modules. */
function copySharp(bundleDir) {
  const modules = join(bundleDir, 'node_modules');
  rmSync(modules, { recursive: true, force: true });
  for (const [name, folder] of sharpRuntimePackages()) {
    cpSync(folder, join(modules, name), {
      recursive: true,
      dereference: true,
      filter: (path) => !path.slice(folder.length).split(/[\\/]/).includes('node_modules'),
    });
  }
}

function requiresSharp(bundle) {
  return existsSync(bundle) && SHARP_REQUIRE.test(readFileSync(bundle, 'utf8'));
}

/** Paths of the files under `dir`, relative to it; none when it does not exist. */
function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => !entry.isDirectory())
    .map((entry) => relative(dir, join(entry.parentPath ?? entry.path, entry.name)));
}

/**
 * Makes `target` hold what `staging` holds, moving in only the files that differ (a rename: a reader
 * sees the old file or the new one, never part of one) and removing the others. Jest's workers
 * synthesize stacks from these bundles and load them while test/package/ runs the build: a bundle
 * that comes out the same is left as it is. Files kept get a fresh modification time, for `--if-stale`.
 */
function syncFolder(staging, target) {
  const wanted = new Set(filesUnder(staging));
  for (const file of filesUnder(target)) {
    if (!wanted.has(file)) rmSync(join(target, file));
  }
  // Folders left empty (node_modules/ of a handler that no longer ships sharp), deepest first.
  if (existsSync(target)) {
    readdirSync(target, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(entry.parentPath ?? entry.path, entry.name))
      .sort((a, b) => b.length - a.length)
      .forEach((folder) => {
        if (readdirSync(folder).length === 0) rmSync(folder, { recursive: true });
      });
  }
  const now = new Date();
  for (const file of wanted) {
    const from = join(staging, file);
    const to = join(target, file);
    if (existsSync(to) && readFileSync(from).equals(readFileSync(to))) {
      utimesSync(to, now, now);
    } else {
      mkdirSync(dirname(to), { recursive: true });
      renameSync(from, to);
    }
  }
}

function handlers() {
  return readdirSync(lambdaDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== 'dist')
    .map((entry) => entry.name)
    .filter((name) => existsSync(join(lambdaDir, name, 'index.ts')));
}

function crc32BinaryPath() {
  const require = createRequire(join(root, 'package.json'));
  try {
    return join(dirname(require.resolve(`${CRC32_BINARY_PACKAGE}/package.json`)), CRC32_BINARY);
  } catch {
    throw new Error(
      `${CRC32_BINARY_PACKAGE} is not installed (npm installs only the binary of this machine's platform); the x86_64 `
      + `Lambda bundles need it: npm install --no-save --os=linux --cpu=x64 --libc=glibc ${CRC32_BINARY_PACKAGE}`,
    );
  }
}

/** Newest modification time of the TypeScript sources of the handlers and the engine, and of the lockfile. */
function newestSourceTime() {
  let newest = statSync(join(root, 'package-lock.json')).mtimeMs;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (path !== distDir) walk(path);
      } else if (entry.name.endsWith('.ts')) {
        newest = Math.max(newest, statSync(path).mtimeMs);
      }
    }
  };
  walk(lambdaDir);
  newest = Math.max(newest, statSync(fileURLToPath(import.meta.url)).mtimeMs);
  return newest;
}

function isStale(names) {
  const newest = newestSourceTime();
  return names.some((name) => {
    const bundle = join(distDir, name, 'index.js');
    return !existsSync(bundle) || statSync(bundle).mtimeMs < newest
      || (SHARP_HANDLERS.includes(name) && !existsSync(join(distDir, name, 'node_modules', 'sharp', 'package.json')));
  });
}

/** Bundles the handlers (all of them, or only when stale). */
async function bundleLambdas({ ifStale = true } = {}) {
  const names = handlers();
  if (ifStale && !isStale(names)) return;
  const binary = crc32BinaryPath();
  rmSync(stagingDir, { recursive: true, force: true });
  await Promise.all(names.map(async (name) => {
    const outfile = join(stagingDir, name, 'index.js');
    await build({
      entryPoints: [join(lambdaDir, name, 'index.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      target: 'node22',
      format: 'cjs',
      // sharp (image preprocessing, issue 26) is loaded only when asked for; its native addon and
      // libvips are shipped beside the bundle, not inside it.
      external: ['@aws-sdk/*', 'sharp'],
      plugins: [nativeCrc32],
      sourcemap: 'inline',
      logLevel: 'warning',
    });
    copyFileSync(binary, join(dirname(outfile), CRC32_BINARY));
    if (SHARP_HANDLERS.includes(name)) {
      copySharp(dirname(outfile));
    } else if (requiresSharp(outfile)) {
      throw new Error(`the ${name} bundle requires sharp, which only ${SHARP_HANDLERS.join(', ')} ships: `
        + 'keep image preprocessing in the packer, or add the handler to SHARP_HANDLERS');
    }
    syncFolder(dirname(outfile), join(distDir, name));
  }));
  rmSync(stagingDir, { recursive: true, force: true });
  console.error(`bundled ${names.length} handler(s)${names.length ? `: ${names.join(', ')}` : ''}`);
}

bundleLambdas({ ifStale: process.argv.includes('--if-stale') }).catch((error) => {
  console.error(error.message ?? error);
  process.exitCode = 1;
});
