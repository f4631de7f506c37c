/**
 * The names of a packed dataset's layout (ARCHITECTURE.md "Dataset layout"): one definition for the
 * constructs, the packing engine (lambda/packing/dataset-layout.ts builds the keys from these) and,
 * by copy, the Python reader (container/shardio/layout.py).
 */
export const DATASET_LAYOUT = {
  /** The current version's manifest, at the dataset's root; each version has its own too. */
  manifest: 'manifest.json',
  /** One folder per version. */
  versions: 'versions/',
  /** The claims that published each version, one per sequence number. */
  published: 'published/',
  /** Working files of the runs, one folder per version being made. */
  plan: '_plan/',
  /** SageMaker ManifestFile channels of a version (and of the current one, at the root). */
  shardsChannel: 'shards.manifest',
  indexChannel: 'index.manifest',
  /** Folders inside a version's folder. */
  shardsFolder: 'shards/',
  indexFolder: 'index/',
  membersFolder: 'members/',
} as const;
