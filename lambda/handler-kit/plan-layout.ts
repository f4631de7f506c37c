import type { FinalizeInput } from '../packing/finalize';
import type { Manifest, ManifestShard } from '../packing/manifest';
import { DatasetObjectError, parseJson } from '../packing/publish';
import type { VersionLayout } from '../packing/dataset-layout';
import type { ManifestPreprocessing } from '../packing/preprocess/image-preprocessing';
import { HandlerInputError } from './handler-input';
import type { SampleDescription } from '../../lib/contract/sample-parts';

/**
 * The working files of a run, under `_plan/<version>/` of the dataset (dataset-layout.ts): not
 * under `versions/`, so never read as data, and one folder per run, so two runs never share them.
 */
export class RunFiles {
  /** The Map's item list: a JSON array of {@link ShardTask}. */
  public readonly tasksKey: string;
  /** What the planner planned: the finalizer's source of truth. */
  public readonly planKey: string;

  constructor(public readonly version: VersionLayout) {
    this.tasksKey = `${version.planPrefix}tasks.json`;
    this.planKey = `${version.planPrefix}plan.json`;
  }

  /** What one packer wrote: a {@link PackedShardResult}. */
  public resultKey(shardName: string): string {
    return `${this.version.planPrefix}results/${shardName}.json`;
  }
}

/** One item of the Map: the shard a packer writes. */
export interface ShardTask {
  /** 0-based position of the shard in the version. */
  readonly shardIndex: number;
  /** `part-00000-of-00128`. */
  readonly shardName: string;
  /** Key of its member list in the new version's folder, relative to the dataset prefix: names the version too. */
  readonly membersKey: string;
}

/**
 * The contents of `_plan/<version>/plan.json`: what the finalizer is given about the version (the
 * same fields as its input), the shards reused from earlier versions and the number of new ones.
 */
export interface PlanSummary extends Pick<FinalizeInput, 'datasetVersion' | 'previousVersion' | 'format' | 'seed' | 'source' | 'labels' | 'sizing'> {
  readonly version: 2;
  /** Shards of earlier versions kept by reference, before the new ones. */
  readonly reused: ManifestShard[];
  /** New shards the packers write. */
  readonly shardCount: number;
  /** The image preprocessing of the run (`IMAGE_PREPROCESSING`) as the manifest records it; absent: none. */
  readonly preprocessing?: ManifestPreprocessing;
  /** The multi-part samples the files form, as the manifest records them; absent when each file is its own record. */
  readonly sample?: SampleDescription;
  /** Inputs the planner already found to be failures (samples that lack a required part): the finalizer lists them beside the packers'. */
  readonly failures?: Manifest['failures'];
}

/** The contents of `_plan/<version>/results/<shard>.json`. */
export interface PackedShardResult {
  readonly shard: Manifest['shards'][number];
  readonly failures: Manifest['failures'];
}

/** Reads a JSON object the run wrote; errors name the key. */
export function parseJsonObject<T>(key: string, data: Buffer): T {
  try {
    return parseJson<T>(key, data);
  } catch (error) {
    if (error instanceof DatasetObjectError) throw new HandlerInputError(error.message);
    throw error;
  }
}
