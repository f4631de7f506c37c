// Bundles every lambda/<handler>/index.ts into lambda/dist/<handler>/index.js.
// lib/ references the bundles as assets, so consumers never need esbuild or Docker to synth.
//
// `node scripts/bundle-lambdas.mjs` always bundles; `--if-stale` only when a bundle is missing or
// older than the sources (cdk.json's app command and jest's global setup run it that way).
import { build } from 'esbuild';
import { copyFileSync, existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const lambdaDir = join(root, 'lambda');
const distDir = join(lambdaDir, 'dist');

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
    return !existsSync(bundle) || statSync(bundle).mtimeMs < newest;
  });
}

/** Bundles the handlers (all of them, or only when stale). */
async function bundleLambdas({ ifStale = true } = {}) {
  const names = handlers();
  if (ifStale && !isStale(names)) return;
  const binary = crc32BinaryPath();
  await Promise.all(names.map(async (name) => {
    const outfile = join(distDir, name, 'index.js');
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
  }));
  console.error(`bundled ${names.length} handler(s)${names.length ? `: ${names.join(', ')}` : ''}`);
}

bundleLambdas({ ifStale: process.argv.includes('--if-stale') }).catch((error) => {
  console.error(error.message ?? error);
  process.exitCode = 1;
});
