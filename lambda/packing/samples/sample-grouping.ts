import type { ListedFile } from '../../io/storage';
import type { ManifestFailure } from '../manifest';
import type { SamplePart } from '../planning/plan-types';
import type { SampleDescription } from '../../../lib/contract/sample-parts';
import { groupsIntoSamples, imagePartOf, partKindOf, sampleKeyOf } from '../../../lib/contract/sample-parts';
import { compareCodePointOrder } from '../../io/key-order';
import { multiPartRecordIoError } from '../formats/recordio-format';
import { PlanError } from '../planning/plan-error';

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
 * returns undefined when the dataset is not multi-part: no `required` parts were asked for and fewer
 * than half of the samples have several files (groupsIntoSamples), so each file is packed as its own
 * record exactly as before. A sample without one of the required parts (`required`, else every part
 * seen) is a failure that names what it lacks.
 *
 * @throws PlanError when no sample is complete: the run would have nothing to pack, and saying why
 * (what the samples lack) beats the planner's "the source lists no files".
 */
export function groupSamples(files: readonly ListedFile[], required?: readonly string[]): SampleGrouping | undefined {
  const bySample = new Map<string, { key: string; parts: SamplePart[]; size: number; modified: number }>();
  let multiPartSamples = 0;
  for (const file of files) {
    const { key, part } = sampleKeyOf(file.key);
    let sample = bySample.get(key);
    if (!sample) {
      sample = { key, parts: [], size: 0, modified: 0 };
      bySample.set(key, sample);
    } else if (sample.parts.length === 1) {
      multiPartSamples++;
    }
    sample.parts.push({ name: part, size: file.size });
    sample.size += file.size;
    sample.modified = Math.max(sample.modified, file.modified);
  }
  if (required === undefined && !groupsIntoSamples(bySample.size, multiPartSamples)) return undefined;

  const seen = new Set<string>();
  for (const sample of bySample.values()) for (const part of sample.parts) if (part.name !== '') seen.add(part.name);
  const requiredParts = required ? [...required].sort(compareCodePointOrder) : [...seen].sort(compareCodePointOrder);
  const samples: SampleFile[] = [];
  const failures: ManifestFailure[] = [];
  // How many failed samples lack each required part (and how many have no part name), for the error when none is complete.
  const lacking = new Map<string, number>();
  let unnamed = 0;
  for (const sample of bySample.values()) {
    sample.parts.sort((a, b) => compareCodePointOrder(a.name, b.name));
    if (sample.parts[0].name === '') {
      unnamed++;
      failures.push({ key: sample.key, reason: 'no part name (no dot in the file name): in a multi-part dataset every file is named '
        + '<sample key>.<part> (0001.jpg, 0001.json); rename it or leave it out of the source (exclude patterns)' });
      continue;
    }
    const missing = requiredParts.filter((name) => !sample.parts.some((part) => part.name === name));
    for (const name of missing) lacking.set(name, (lacking.get(name) ?? 0) + 1);
    if (missing.length > 0) {
      failures.push({ key: sample.key, reason: missingPartsReason(sample.key, missing, sample.parts, requiredParts) });
    } else {
      samples.push(sample);
    }
  }
  // An empty listing is the planner's to refuse ("the source lists no files").
  if (samples.length === 0 && failures.length > 0) throw noCompleteSample(failures, { lacking, unnamed }, requiredParts);
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

/** The run's error when every sample is a failure: how many there are, and what they lack most often. */
function noCompleteSample(
  failures: readonly ManifestFailure[], why: { readonly lacking: ReadonlyMap<string, number>; readonly unnamed: number }, required: readonly string[],
): PlanError {
  const counts = [...why.lacking].sort((a, b) => b[1] - a[1]).map(([name, count]) => `${count} lack part '${name}'`);
  if (why.unnamed > 0) counts.push(`${why.unnamed} have no part name`);
  return new PlanError(`no sample is complete: all ${failures.length} samples are failures (${counts.join(', ')}; required: ${required.join(', ')}), `
    + 'so there is nothing to pack; name the parts every sample has (--parts, the parts prop), add the missing files, or leave the '
    + `incomplete samples out of the source (exclude patterns). The first: ${failures[0].key}: ${failures[0].reason}`);
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
 * Whether a listing in key order groups into multi-part samples without parts named (groupsIntoSamples),
 * counted without holding it: how a listing too large to hold is told to be multi-part. A sample's files
 * all begin `<key>.`, so they are neighbours in key order unless a folder named `<key>.<something>/`
 * sorts between them.
 */
export function formsMultiPartSamples(sorted: Iterable<ListedFile>): boolean {
  let previous: string | undefined;
  let samples = 0;
  let multiPartSamples = 0;
  let partsOfPrevious = 0;
  for (const file of sorted) {
    const { key } = sampleKeyOf(file.key);
    if (key === previous) {
      if (++partsOfPrevious === 2) multiPartSamples++;
    } else {
      samples++;
      partsOfPrevious = 1;
      previous = key;
    }
  }
  return groupsIntoSamples(samples, multiPartSamples);
}
