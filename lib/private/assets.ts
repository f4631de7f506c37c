import * as fs from 'fs';
import * as path from 'path';

/** The Lambda handlers bundled by `scripts/bundle-lambdas.mjs`. */
export type LambdaHandlerName = 'shard-planner' | 'shard-packer' | 'shard-finalizer' | 'job-diagnoser';

/**
 * The folders of `container/` the library uses: the training code, the DALI image's build context,
 * and the readers (the `shardio` package) alone.
 */
export type ContainerFolder = 'code' | 'dali' | 'readers';

/**
 * The folder of a handler's bundle, `lambda/dist/<handler>/` (index.js and its native addon), for
 * `lambda.Code.fromAsset`. Works from the sources (`lib/private/`) and from the published package
 * (`dist/lib/private/`). This file is the only place that knows where the package's assets are.
 *
 * @throws when the bundle was not built
 */
export function lambdaBundleDirectory(handler: LambdaHandlerName): string {
  const directory = path.join(packageRoot(), 'lambda', 'dist', handler);
  if (!fs.existsSync(path.join(directory, 'index.js'))) {
    throw new Error(`the ${handler} Lambda bundle is missing (${directory}/index.js): run \`npm run build\` `
      + '(or `node scripts/bundle-lambdas.mjs`) before synthesizing');
  }
  return directory;
}

/**
 * `container/` (the reference training code: train.py and the shardio package),
 * `container/dali/` (the Dockerfile of the DALI image) or `container/shardio/` (the readers),
 * shipped with the package.
 */
export function containerDirectory(folder: ContainerFolder): string {
  const container = path.join(packageRoot(), 'container');
  return folder === 'code' ? container : path.join(container, folder === 'dali' ? 'dali' : 'shardio');
}

/**
 * The nearest folder above this file with a package.json: the package root both in the source tree
 * (`lib/private`) and once compiled (`dist/lib/private`).
 */
function packageRoot(): string {
  let directory = __dirname;
  while (!fs.existsSync(path.join(directory, 'package.json'))) {
    const parent = path.dirname(directory);
    if (parent === directory) throw new Error(`no package.json above ${__dirname}: cannot locate the package's assets`);
    directory = parent;
  }
  return directory;
}
