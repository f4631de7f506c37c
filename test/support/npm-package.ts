import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** This repository's package.json. */
export const PACKAGE_JSON = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));

/** The environment of the commands these tests run: jsii's notice about Node 20's end of life is noise here. */
const COMMAND_ENV = { ...process.env, JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION: '20', CDK_DISABLE_CLI_TELEMETRY: 'true' };

/** What a command printed. */
export interface CommandOutput {
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a command to its end and returns what it printed.
 *
 * @throws when it exits with another status than 0, with its command line and output
 */
export function run(command: string, args: string[], options: { cwd: string; env?: Record<string, string> }): CommandOutput {
  const result = spawnSync(command, args, {
    cwd: options.cwd,
    env: { ...COMMAND_ENV, ...options.env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`\`${[command, ...args].join(' ')}\` in ${options.cwd} exited with ${result.status ?? result.signal}:\n`
      + `${result.stdout.slice(-4000)}\n${result.stderr.slice(-8000)}`);
  }
  return { stdout: result.stdout, stderr: result.stderr };
}

/**
 * The bin folder of a Node.js of `major`, to put first on PATH: `scripts/node-binary.mjs` installs it
 * from the npm registry once and keeps it.
 *
 * @throws when it cannot be had, saying why and what to do
 */
export function nodeBinFolder(major: number): string {
  return run(process.execPath, [path.join(REPO_ROOT, 'scripts', 'node-binary.mjs'), String(major)], { cwd: REPO_ROOT }).stdout.trim();
}

/** One file of a packed tarball, as `npm pack --json` lists it. */
export interface PackedFile {
  readonly path: string;
  readonly size: number;
}

/** What `npm pack --json` reports. */
export interface PackResult {
  readonly filename: string;
  readonly size: number;
  readonly unpackedSize: number;
  readonly files: PackedFile[];
  readonly bundled: string[];
}

/**
 * `npm pack`s this repository into `destination` as it is (the build is the caller's: `npm run
 * build`; the prepack script that would repeat it is skipped).
 */
export function packRepository(destination: string): PackResult {
  const { stdout } = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', destination], { cwd: REPO_ROOT });
  return (JSON.parse(stdout) as PackResult[])[0];
}

/** The dependencies of a fresh app: package name → version or `file:` spec. */
export interface AppDependencies {
  readonly dependencies: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
}

/**
 * Creates an npm project in `appDir` and installs `tarball` (a file in `appDir`) with `dependencies`,
 * offline, with `npm ci`: from the npm cache that `npm ci` of this repository filled, at the versions
 * this repository's package-lock.json pins.
 *
 * The app's lockfile is cut from this repository's: every package the app's dependencies and the
 * tarball's (dependencies, optional dependencies, peers) reach, at the same place in node_modules.
 * `npm install --offline` cannot be used instead: without a lockfile npm resolves version ranges,
 * which needs full registry documents that `npm ci` does not cache.
 */
export function installOffline(appDir: string, tarball: string, app: AppDependencies): void {
  const tarballSpec = `file:${tarball}`;
  const manifest = {
    name: 'consumer-app',
    version: '0.0.0',
    private: true,
    dependencies: { ...app.dependencies, [PACKAGE_JSON.name]: tarballSpec },
    devDependencies: app.devDependencies ?? {},
  };
  fs.writeFileSync(path.join(appDir, 'package.json'), JSON.stringify(manifest, null, 2));
  fs.writeFileSync(path.join(appDir, 'package-lock.json'), JSON.stringify(consumerLockfile(manifest, path.join(appDir, tarball), tarballSpec), null, 2));
  run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], { cwd: appDir });
}

interface LockEntry {
  readonly version?: string;
  readonly inBundle?: boolean;
  readonly dev?: boolean;
  readonly devOptional?: boolean;
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly [field: string]: unknown;
}

function consumerLockfile(manifest: { name: string; version: string } & AppDependencies, tarballPath: string, tarballSpec: string): unknown {
  const repoLock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const entries = repoLock.packages;
  const packages: Record<string, LockEntry> = {
    '': { name: manifest.name, version: manifest.version, dependencies: manifest.dependencies, devDependencies: manifest.devDependencies },
  };
  const pending: string[] = [];
  const need = (from: string, dependencies: Record<string, string> | undefined) => {
    for (const name of Object.keys(dependencies ?? {})) {
      if (name === PACKAGE_JSON.name) continue;
      const location = locate(entries, from, name);
      if (!location) throw new Error(`${name}, needed by ${from || 'the app'}, is not in package-lock.json`);
      pending.push(location);
    }
  };
  need('', { ...manifest.dependencies, ...manifest.devDependencies });
  need('', { ...PACKAGE_JSON.optionalDependencies, ...PACKAGE_JSON.peerDependencies });
  while (pending.length > 0) {
    const location = pending.pop()!;
    if (packages[location]) continue;
    packages[location] = withoutDevFlags(entries[location]);
    for (const [nested, entry] of Object.entries(entries)) {
      if (nested.startsWith(`${location}/node_modules/`) && entry.inBundle) packages[nested] = withoutDevFlags(entry);
    }
    const entry = entries[location];
    need(location, { ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies });
  }
  packages[`node_modules/${PACKAGE_JSON.name}`] = {
    version: PACKAGE_JSON.version,
    resolved: tarballSpec,
    integrity: `sha512-${createHash('sha512').update(fs.readFileSync(tarballPath)).digest('base64')}`,
    license: PACKAGE_JSON.license,
    dependencies: PACKAGE_JSON.dependencies,
    optionalDependencies: PACKAGE_JSON.optionalDependencies,
    peerDependencies: PACKAGE_JSON.peerDependencies,
    bundleDependencies: PACKAGE_JSON.bundledDependencies,
    bin: PACKAGE_JSON.bin,
    engines: PACKAGE_JSON.engines,
  };
  const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { name: manifest.name, version: manifest.version, lockfileVersion: 3, requires: true, packages: sorted };
}

/** Where Node.js finds `name` from the package at `from` (a lockfile location), as the lockfile lays out node_modules. */
function locate(entries: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let directory = from;
  for (;;) {
    const candidate = `${directory ? `${directory}/` : ''}node_modules/${name}`;
    if (entries[candidate]) return candidate;
    if (!directory) return undefined;
    const parent = directory.lastIndexOf('/node_modules/');
    directory = parent < 0 ? '' : directory.slice(0, parent);
  }
}

function withoutDevFlags(entry: LockEntry): LockEntry {
  const { dev: _dev, devOptional: _devOptional, ...rest } = entry;
  return rest;
}
