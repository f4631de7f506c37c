// Samples made of several files, WebDataset's convention: files that share a key up to the first dot
// of their name form one sample (`train/0001.jpg`, `train/0001.json`, `train/0001.mask.png` are the
// sample `train/0001` with the parts `jpg`, `json` and `mask.png`). One definition for the packers
// (which group a listing into samples), the manifest (which records the parts) and, through the
// generated container/shardio/contract.py, the Python readers (which yield them).
//
// A dataset whose every sample has one part is packed exactly as before (one record per file, the
// classification layout); a multi-part sample becomes one tf.train.Example:
// - the image part (see `imagePartOf`) in today's `image/encoded`, `image/format`, `image/filename`
//   features, with `image/class/label`, so classification readers read a multi-part set unchanged;
// - every other part as a one-value bytes feature named by the part (`json`, `mask.png`, `txt`);
// - the sample's key in `SAMPLE_KEY_FEATURE`.
// RecordIO holds one payload per record, read as an image by MXNet's ImageRecordIter: it refuses
// multi-part samples (the error names `format: tfrecord`).

/** The feature that holds a multi-part sample's key (the path up to the first dot of the name). */
export const SAMPLE_KEY_FEATURE = 'sample/key';

/** What a part holds, from its name's last extension: checked at pack time and decoded by the readers accordingly. */
export const PART_KINDS = ['image', 'json', 'text', 'bytes'] as const;
/** A part's kind. */
export type PartKind = (typeof PART_KINDS)[number];

/** Extensions (lower case, the last one of a part's name) of each kind; any other is `bytes`. */
export const PART_KIND_EXTENSIONS: Readonly<Record<Exclude<PartKind, 'bytes'>, readonly string[]>> = {
  image: ['jpg', 'jpeg', 'png'],
  json: ['json'],
  text: ['txt', 'text', 'cls', 'caption'],
};

/** A sample's key and a part's name, split from a file's key relative to the dataset's source prefix. */
export interface SampleKeyParts {
  /** The sample: the relative key up to the first dot of its last segment (`train/0001`). */
  readonly key: string;
  /** The part: what follows that dot (`mask.png`); empty for a name without a dot. */
  readonly part: string;
}

/**
 * Splits a file's relative key into its sample key and part name. The first dot of the last path segment
 * separates them (WebDataset's rule); a leading dot (`.hidden`) does not count, so such a file is its own sample.
 */
export function sampleKeyOf(relativeKey: string): SampleKeyParts {
  const slash = relativeKey.lastIndexOf('/');
  const name = relativeKey.slice(slash + 1);
  const dot = name.indexOf('.', 1);
  if (dot < 0) return { key: relativeKey, part: '' };
  return { key: relativeKey.slice(0, slash + 1 + dot), part: name.slice(dot + 1) };
}

/**
 * Whether files are grouped into multi-part samples when no parts are named (`--parts`, the `parts`
 * prop): when at least half of the samples they form have several files. A classification set with a
 * stray pair (`x.jpg` beside `x.png`, `n0123.jpg.bak`) then stays one record per file, as it was
 * before samples existed, instead of failing every other file as a sample "missing" the stray part;
 * a dataset of samples with a few incomplete ones is grouped, and those few are listed failures.
 * Named parts always group: a set where fewer than half have their annotations is packed by naming them.
 */
export function groupsIntoSamples(samples: number, multiPartSamples: number): boolean {
  return multiPartSamples > 0 && multiPartSamples * 2 >= samples;
}

/** The kind of a part, from the last extension of its name (`mask.png` → image), case-insensitive. */
export function partKindOf(part: string): PartKind {
  const extension = part.slice(part.lastIndexOf('.') + 1).toLowerCase();
  for (const kind of ['image', 'json', 'text'] as const) {
    if (PART_KIND_EXTENSIONS[kind].includes(extension)) return kind;
  }
  return 'bytes';
}

/**
 * The part stored in the classification features: the first part, in `parts`' order, whose whole name
 * is an image extension (`jpg`, `png`; not `mask.png`, which is an image of another role). Undefined
 * when the samples have none (text and JSON only): then no `image/*` feature but the label is written.
 */
export function imagePartOf(parts: readonly string[]): string | undefined {
  return parts.find((part) => PART_KIND_EXTENSIONS.image.includes(part.toLowerCase()));
}

/** What a multi-part dataset's manifest records under `sample` (absent for one-part datasets). */
export interface SampleDescription {
  /** Every part seen or required, sorted by name, with its kind. */
  readonly parts: readonly { readonly name: string; readonly kind: PartKind }[];
  /** The parts every sample has (the `parts` setting, or every part seen when it is not given). */
  readonly required: readonly string[];
  /** The part held in `image/encoded`, if any (`imagePartOf`). */
  readonly imagePart?: string;
  /** How many samples the source's files form: what records and failures add up to (the source's `objects` counts files). */
  readonly samples: number;
}
