import type { ListedFile } from '../../io/storage';
import type { ManifestFailure } from '../manifest';
import type { SamplePart } from '../planning/plan-types';
import type { SampleDescription } from '../../../lib/contract/sample-parts';
import { imagePartOf, partKindOf, sampleKeyOf } from '../../../lib/contract/sample-parts';
import { compareCodePointOrder } from '../../io/key-order';
import { multiPartRecordIoError } from '../formats/recordio-format';

/** A multi-part sample as the planner takes it: one listed entry whose key is the sample's, size the sum of its parts'. */
export interface SampleFile extends ListedFile {
  /** Its parts, sorted by name. */
  readonly parts: readonly SamplePart[];
  /** The dataset's image part, which every sample has (SampleDescription `imagePart`), if any. */
  readonly imagePart?: string;
}

/** A listing grouped into multi-part samples (lib/contract/sample-parts.ts). */
export interface SampleGrouping {
  /** The complete samples, in the listing's order of their first part. */
  readonly samples: SampleFile[];
  /** Samples that lack a required part: listed failures, never packed with a hole. */
  readonly failures: ManifestFailure[];
  /** What the manifest records under `sample`. */
  readonly description: SampleDescription;
}

/**
 * Groups listed files into samples by key up to the first dot of their names (sampleKeyOf), or
 * returns undefined when the dataset is not multi-part: no `required` parts were asked for and every
 * sample has one file, so each file is packed as its own record exactly as before. A sample without
 * one of the required parts (`required`, else every part seen) is a failure that names what it lacks.
 */
export function groupSamples(files: readonly ListedFile[], required?: readonly string[]): SampleGrouping | undefined {
  const bySample = new Map<string, { key: string; parts: SamplePart[]; size: number; modified: number }>();
  let multiPart = false;
  for (const file of files) {
    const { key, part } = sampleKeyOf(file.key);
    let sample = bySample.get(key);
    if (!sample) {
      sample = { key, parts: [], size: 0, modified: 0 };
      bySample.set(key, sample);
    } else {
      multiPart = true;
    }
    sample.parts.push({ name: part, size: file.size });
    sample.size += file.size;
    sample.modified = Math.max(sample.modified, file.modified);
  }
  if (!multiPart && required === undefined) return undefined;

  const seen = new Set<string>();
  for (const sample of bySample.values()) for (const part of sample.parts) if (part.name !== '') seen.add(part.name);
  const requiredParts = required ? [...required].sort(compareCodePointOrder) : [...seen].sort(compareCodePointOrder);
  const samples: SampleFile[] = [];
  const failures: ManifestFailure[] = [];
  for (const sample of bySample.values()) {
    sample.parts.sort((a, b) => compareCodePointOrder(a.name, b.name));
    if (sample.parts[0].name === '') {
      failures.push({ key: sample.key, reason: 'no part name (no dot in the file name): in a multi-part dataset every file is named '
        + '<sample key>.<part> (0001.jpg, 0001.json); rename it or leave it out of the source (exclude patterns)' });
      continue;
    }
    const missing = requiredParts.filter((name) => !sample.parts.some((part) => part.name === name));
    if (missing.length > 0) {
      failures.push({ key: sample.key, reason: missingPartsReason(sample.key, missing, sample.parts, requiredParts) });
    } else {
      samples.push(sample);
    }
  }
  for (const name of requiredParts) seen.add(name);
  const names = [...seen].sort(compareCodePointOrder);
  // Of the required parts only: every record then holds it, and readers find `image/encoded` in each.
  const imagePart = imagePartOf(requiredParts);
  return {
    samples: imagePart === undefined ? samples : samples.map((sample) => ({ ...sample, imagePart })),
    failures,
    description: {
      parts: names.map((name) => ({ name, kind: partKindOf(name) })),
      required: requiredParts,
      ...(imagePart !== undefined ? { imagePart } : {}),
      samples: bySample.size,
    },
  };
}

function missingPartsReason(key: string, missing: readonly string[], present: readonly SamplePart[], required: readonly string[]): string {
  const has = present.map((part) => `${key}.${part.name}`).join(', ');
  return `sample lacks part${missing.length === 1 ? '' : 's'} ${missing.map((name) => `'${name}'`).join(', ')} (required: ${required.join(', ')}; `
    + `it has ${has || 'no file'}): add the file${missing.length === 1 ? '' : 's'}, remove the sample, or pack without it (--allow-missing, allowMissing)`;
}

/** A setting that cannot pack multi-part samples. */
export class SampleSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SampleSettingsError';
  }
}

/**
 * Image preprocessing (resizing) refused for multi-part samples: resizing the image part alone would
 * leave what the other parts say about it (boxes in pixels, a mask's size) describing another picture.
 */
export function refusePreprocessedSamples(): SampleSettingsError {
  return new SampleSettingsError('image preprocessing (--resize, --max-side; ShardedDataset imagePreprocessing) cannot be used with multi-part '
    + 'samples: resizing the image part would leave its other parts (boxes in pixels, masks) describing another size; '
    + 'pack without it and resize in the training pipeline, or resize the files before packing');
}

/** Before anything is written: the settings a multi-part dataset cannot be packed with fail the run, naming the one that works. */
export function checkSampleSettings(grouping: SampleGrouping, settings: { readonly format: string; readonly preprocessing?: unknown }): void {
  if (settings.format === 'recordio') {
    const sample = grouping.samples[0]?.key ?? grouping.failures[0]?.key ?? '';
    throw new SampleSettingsError(multiPartRecordIoError(sample, grouping.description.parts.map((part) => part.name)).message);
  }
  if (settings.preprocessing !== undefined) throw refusePreprocessedSamples();
}

/**
 * Whether two files in a row (of a listing in key order) belong to one sample: how a listing too large
 * to hold is told to be multi-part without holding it. A sample's files all begin `<key>.`, so they are
 * neighbours in key order unless a folder named `<key>.<something>/` sorts between them.
 */
export function hasNeighbouringParts(sorted: Iterable<ListedFile>): boolean {
  let previous: string | undefined;
  for (const file of sorted) {
    const { key } = sampleKeyOf(file.key);
    if (key === previous) return true;
    previous = key;
  }
  return false;
}
