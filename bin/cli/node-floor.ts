/**
 * The oldest Node.js the package runs on is package.json's `engines.node` (`>=22`): npm only warns
 * (EBADENGINE) when it is not met, and older releases then fail later and elsewhere, so the command
 * line refuses them first, in one line.
 */

/** The floor's major version from an `engines.node` range of the form `>=22`; undefined for another form. */
export function floorOf(engines: string | undefined): number | undefined {
  const major = /^>=\s*(\d+)(?:\.\d+){0,2}$/.exec(engines?.trim() ?? '')?.[1];
  return major === undefined ? undefined : Number(major);
}

/** Why Node.js `version` (`20.20.2`, as process.versions.node reads) is too old for `floor`, and how to get it; undefined when it is not. */
export function nodeFloorProblem(version: string, floor: number | undefined): string | undefined {
  const major = Number(version.split('.')[0]);
  if (floor === undefined || major >= floor) return undefined;
  return `Node.js ${version} is older than ${floor}, the oldest this package runs on: install Node.js ${floor} `
    + `(nvm install ${floor}, or in a clone of the repository: export PATH="$(node scripts/node-binary.mjs --floor):$PATH")`;
}
