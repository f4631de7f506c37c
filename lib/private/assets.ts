import * as fs from 'fs';
import * as path from 'path';

/** The Lambda handlers bundled by `scripts/bundle-lambdas.mjs`. */
export type LambdaHandlerName = 'shard-planner' | 'shard-packer' | 'shard-finalizer';

/**
 * The folder of a handler's bundle, `lambda/dist/<handler>/` (index.js and its native addon), for
 * `lambda.Code.fromAsset`. Works from the sources (`lib/private/`) and from the published package
 * (`dist/lib/private/`). The only place that knows where the bundles are.
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

function packageRoot(): string {
  let directory = __dirname;
  while (!fs.existsSync(path.join(directory, 'package.json'))) {
    const parent = path.dirname(directory);
    if (parent === directory) throw new Error(`no package.json above ${__dirname}: cannot locate lambda/dist`);
    directory = parent;
  }
  return directory;
}
