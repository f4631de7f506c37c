/**
 * The names of a packed dataset's layout (ARCHITECTURE.md "Dataset layout"): one definition for the
 * constructs, the packing engine (lambda/packing/dataset-layout.ts builds the keys from these) and,
 * through the generated container/shardio/contract.py (`npm run contract:python`), the Python reader.
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

/**
 * A version id, `v<sequence, 8 digits>-<8 random hex digits>` (`v00000002-1a2b3c4d`): the shape as a
 * regular expression's source, ASCII only in both languages (`[0-9]`, never `\d`, which matches
 * other scripts' digits in Python), the sequence in group 1. Match it whole (`^…$`, `fullmatch`).
 */
export const VERSION_ID_PATTERN = 'v([0-9]{8})-([0-9a-f]{8})';

/** Digits of a version's sequence number, in its id and its claim's key (`published/00000002.json`). */
export const VERSION_SEQUENCE_DIGITS = 8;
