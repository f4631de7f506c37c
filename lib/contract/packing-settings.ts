import { PACKING_ENV } from './handler-environment';
import type { LabelMode, ShardFormatName } from './record-vocabulary';
import { DEFAULT_LABEL_MODE, DEFAULT_SHARD_FORMAT, isOneOf, LABEL_MODES, SHARD_FORMAT_NAMES } from './record-vocabulary';
import { labelFileProblem } from './label-file';
import { DEFAULT_SHARD_BYTES, MAX_SHARD_BYTES, MIN_SHARD_BYTES } from './shard-limits';
import { MIB } from './units';

// A packing run's settings, decoded once: the construct's props, the CLI's flags and the handlers'
// environment all become a RawPackingSettings, which `checkPackingSettings` checks and
// `normalizePackingSettings` completes with every default. Each default and range lives here only.

/** The settings a packing run is asked for, each optional: as the construct, the CLI or the environment gives them. */
export interface RawPackingSettings {
  readonly format?: string;
  readonly seed?: number;
  readonly labels?: string;
  /**
   * The label file of labels `file` (lib/contract/label-file.ts): a local path or an s3:// URI on the
   * CLI, an s3:// URI in the planner's environment. Given alone, it makes the labels `file`.
   */
  readonly labelFile?: string;
  /** Target shard size in bytes; cannot be combined with `shardCount`. */
  readonly targetShardBytes?: number;
  /** Exact number of shards, rounded up to a multiple of `consumers` (see `shardCountFor`). */
  readonly shardCount?: number;
  /** Instances × GPU processes × loader workers: the readers that split the shards between them. */
  readonly consumers?: number;
  /** Source objects a packer reads at once. */
  readonly readConcurrency?: number;
  /** Days an old version is kept after it stops being current. */
  readonly retentionDays?: number;
  /** Publish a version with listed failures. */
  readonly allowMissing?: boolean;
  /** The parts every multi-part sample must have (`jpg`, `json`, `mask.png`: lib/contract/sample-parts.ts); absent, every part seen. */
  readonly parts?: readonly string[];
}

/** The settings with every default applied. */
export interface PackingSettings {
  readonly format: ShardFormatName;
  readonly seed: number;
  readonly labels: LabelMode;
  /** Where the label file is, with labels `file` (and only then). */
  readonly labelFile?: string;
  /** The target the planner packs to when no exact count is asked for (the default applied); absent with `shardCount`. */
  readonly targetShardBytes?: number;
  /** The exact count asked for, when one was; the planner rounds it up to a multiple of `consumers` (`shardCountFor`). */
  readonly shardCount?: number;
  readonly consumers: number;
  readonly readConcurrency: number;
  readonly retentionDays: number;
  readonly allowMissing: boolean;
  /** The required parts as given, sorted; absent: every part seen is required. */
  readonly parts?: readonly string[];
}

/** The value of each setting when none is given. */
export const PACKING_DEFAULTS = {
  format: DEFAULT_SHARD_FORMAT,
  seed: 0,
  labels: DEFAULT_LABEL_MODE,
  targetShardBytes: DEFAULT_SHARD_BYTES,
  /** One reader: every shard count is a multiple of it. */
  consumers: 1,
  /**
   * Reads from S3 (the packer Lambdas, the CLI with an S3 side): each GET waits tens of
   * milliseconds for its first byte, so 64 in flight keep one shard's network share busy.
   */
  readConcurrency: 64,
  /**
   * Reads of local files (the CLI, folder to folder): a read waits on the disk, not the network,
   * and a worker thread per core each has its own reads in flight, so fewer per shard suffice.
   */
  localReadConcurrency: 32,
  /** A week: long enough that a training job started on the old version finishes on it. */
  retentionDays: 7,
  allowMissing: false,
} as const;

/** A whole-number setting's allowed range. */
export interface WholeNumberRange {
  readonly min: number;
  readonly max: number;
}

/** The allowed range of each numeric setting. */
export const PACKING_LIMITS = {
  /** Any seed the shuffle takes (lambda/packing/planning/seeded-random.ts: 0..2^53-1). */
  seed: { min: 0, max: Number.MAX_SAFE_INTEGER },
  targetShardBytes: { min: MIN_SHARD_BYTES, max: MAX_SHARD_BYTES },
  shardCount: { min: 1, max: Number.MAX_SAFE_INTEGER },
  consumers: { min: 1, max: Number.MAX_SAFE_INTEGER },
  /** Each read in flight holds its file in memory: past 1,024 a packer's memory, not its reads, is the limit. */
  readConcurrency: { min: 1, max: 1024 },
  /** Ten years: more is a typo, not a retention period. */
  retentionDays: { min: 0, max: 3650 },
} as const;

/** What is wrong with one setting. */
export interface PackingSettingsProblem {
  /** The setting, as RawPackingSettings names it. */
  readonly setting: keyof RawPackingSettings;
  /** A short code (the construct's ValidationError code). */
  readonly code: string;
  /** Names the setting as the caller calls it, the value and what is allowed. */
  readonly message: string;
}

/** What each caller calls a setting in its messages: a prop, a flag, an environment variable. */
export type PackingSettingNames = Readonly<Record<keyof RawPackingSettings, string>>;

/** The construct's props' names (ShardedDatasetProps). */
export const PACKING_PROP_NAMES: PackingSettingNames = {
  format: 'format',
  seed: 'seed',
  labels: 'labels',
  labelFile: 'labelFile',
  targetShardBytes: 'targetShardSize',
  shardCount: 'shardCount',
  consumers: 'consumers (instances × GPU processes × loader workers)',
  readConcurrency: 'packerConcurrency',
  retentionDays: 'versionRetention (days)',
  allowMissing: 'allowMissing',
  parts: 'parts',
};

/** The handlers' environment variables (lib/contract/handler-environment.ts). */
export const PACKING_ENV_NAMES: PackingSettingNames = {
  format: `environment variable ${PACKING_ENV.format}`,
  seed: `environment variable ${PACKING_ENV.seed}`,
  labels: `environment variable ${PACKING_ENV.labels}`,
  labelFile: `environment variable ${PACKING_ENV.labelFile}`,
  targetShardBytes: `environment variable ${PACKING_ENV.targetShardBytes}`,
  shardCount: `environment variable ${PACKING_ENV.shardCount}`,
  consumers: `environment variable ${PACKING_ENV.consumers}`,
  readConcurrency: `environment variable ${PACKING_ENV.readConcurrency}`,
  retentionDays: `environment variable ${PACKING_ENV.retentionDays}`,
  allowMissing: `environment variable ${PACKING_ENV.allowMissing}`,
  parts: `environment variable ${PACKING_ENV.parts}`,
};

const CODES: Readonly<Record<keyof RawPackingSettings, string>> = {
  format: 'InvalidFormat',
  seed: 'InvalidSeed',
  labels: 'InvalidLabels',
  labelFile: 'InvalidLabelFile',
  targetShardBytes: 'InvalidShardSize',
  shardCount: 'InvalidShardCount',
  consumers: 'InvalidConsumers',
  readConcurrency: 'InvalidPackerConcurrency',
  retentionDays: 'InvalidVersionRetention',
  allowMissing: 'InvalidAllowMissing',
  parts: 'InvalidParts',
};

/**
 * Every problem of the settings: a value out of its range, a name outside the vocabulary, a size
 * and a count both given. Undefined settings are not checked (the defaults are valid). An exact
 * shard count that is not a multiple of the consumers is no problem: it is rounded up (`shardCountFor`).
 */
export function checkPackingSettings(raw: RawPackingSettings, names: PackingSettingNames = PACKING_PROP_NAMES): PackingSettingsProblem[] {
  const problems: PackingSettingsProblem[] = [];
  const problem = (setting: keyof RawPackingSettings, message: string, code = CODES[setting]) => problems.push({ setting, code, message });
  for (const setting of ['format', 'labels'] as const) {
    const allowed: readonly string[] = setting === 'format' ? SHARD_FORMAT_NAMES : LABEL_MODES;
    const value = raw[setting];
    if (value !== undefined && !isOneOf(allowed, value)) {
      problem(setting, `${names[setting]} must be ${allowed.map((name) => `'${name}'`).join(' or ')}, got ${JSON.stringify(value)}`);
    }
  }
  for (const setting of ['seed', 'shardCount', 'consumers', 'readConcurrency', 'retentionDays'] as const) {
    const { min, max } = PACKING_LIMITS[setting];
    const value = raw[setting];
    if (value !== undefined && !isWholeNumberIn(value, min, max)) {
      problem(setting, `${names[setting]} must be a whole number ${describeRange(min, max, value)}, got ${String(value)}`);
    }
  }
  const size = raw.targetShardBytes;
  if (size !== undefined && !isWholeNumberIn(size, MIN_SHARD_BYTES, MAX_SHARD_BYTES)) {
    problem('targetShardBytes', `${names.targetShardBytes} must be a whole number of bytes between ${MIN_SHARD_BYTES / MIB} MiB (${MIN_SHARD_BYTES}) `
      + `and ${MAX_SHARD_BYTES / MIB} MiB (${MAX_SHARD_BYTES}), got ${describeBytes(size)}`);
  }
  if (size !== undefined && raw.shardCount !== undefined) {
    problem('shardCount', `give ${names.targetShardBytes} or ${names.shardCount}, not both: the shard count follows from the size, `
      + 'or the size from the count', 'ShardSizeAndCount');
  }
  problems.push(...labelFileProblems(raw, names));
  if (raw.allowMissing !== undefined && typeof raw.allowMissing !== 'boolean') {
    problem('allowMissing', `${names.allowMissing} must be true or false, got ${JSON.stringify(raw.allowMissing)}`);
  }
  const partsProblem = raw.parts === undefined ? undefined : checkParts(raw.parts);
  if (partsProblem) problem('parts', `${names.parts} ${partsProblem}, got ${JSON.stringify(raw.parts)}`);
  return problems;
}

/** Labels `file` need a label file, and a label file is for labels `file` only: an explicit other mode with one is a contradiction. */
function labelFileProblems(raw: RawPackingSettings, names: PackingSettingNames): PackingSettingsProblem[] {
  const { labels, labelFile } = raw;
  const problem = (code: PackingSettingsProblem['code'], message: string) => [{ setting: 'labelFile' as const, code, message }];
  if (labelFile === undefined) {
    return labels === 'file' ? problem('LabelFileMissing',
      `${names.labels} 'file' takes the labels from a label file: give ${names.labelFile} (a .csv or .jsonl file mapping sample keys to classes)`) : [];
  }
  const shape = labelFileProblem(names.labelFile, labelFile);
  if (shape) return problem(CODES.labelFile, shape);
  if (labels !== undefined && labels !== 'file') {
    return problem('LabelFileWithOtherLabels',
      `${names.labelFile} is read with ${names.labels} 'file' only, got ${names.labels} ${JSON.stringify(labels)}: leave out one of them`);
  }
  return [];
}

/**
 * The settings with every default applied (check them first). `readsLocalFiles`: the packer reads
 * a local folder, not S3, which takes another read concurrency by default.
 */
export function normalizePackingSettings(raw: RawPackingSettings, readsLocalFiles = false): PackingSettings {
  const defaults = PACKING_DEFAULTS;
  return {
    format: (raw.format ?? defaults.format) as ShardFormatName,
    seed: raw.seed ?? defaults.seed,
    // A label file alone asks for its labels.
    labels: (raw.labels ?? (raw.labelFile !== undefined ? 'file' : defaults.labels)) as LabelMode,
    ...(raw.labelFile !== undefined ? { labelFile: raw.labelFile } : {}),
    // A target size or an exact count, never both: the one asked for, else the default target.
    ...(raw.shardCount !== undefined ? { shardCount: raw.shardCount } : { targetShardBytes: raw.targetShardBytes ?? defaults.targetShardBytes }),
    consumers: raw.consumers ?? defaults.consumers,
    readConcurrency: raw.readConcurrency ?? (readsLocalFiles ? defaults.localReadConcurrency : defaults.readConcurrency),
    retentionDays: raw.retentionDays ?? defaults.retentionDays,
    allowMissing: raw.allowMissing ?? defaults.allowMissing,
    ...(raw.parts !== undefined ? { parts: [...raw.parts].sort() } : {}),
  };
}

/** Part names as a sample's files end (`jpg`, `mask.png`): no path, no leading dot, no comma (the environment joins them with commas). */
const PART_NAME = /^[^./,\p{Cc}][^/,\p{Cc}]*$/u;

/**
 * Why a `parts` list cannot be used, or undefined: one or more distinct part names. One is useful:
 * it groups a set where fewer than half the samples have several files (groupsIntoSamples), with that
 * part required and the others packed where present (`jpg`, with a caption for some images).
 */
function checkParts(parts: unknown): string | undefined {
  const rule = 'must name one or more distinct parts, each what follows the first dot of a sample\'s file names (jpg, json, mask.png)';
  if (!Array.isArray(parts) || parts.length < 1 || new Set(parts).size !== parts.length) return rule;
  const bad = parts.find((part) => typeof part !== 'string' || !PART_NAME.test(part));
  return bad === undefined ? undefined : `${rule}; ${JSON.stringify(bad)} is not one`;
}

/**
 * The shard count an exact request becomes: rounded UP to a multiple of the consumers, so that every
 * reader gets the same number of shards. Decided once for the construct, the CLI and the engine:
 * rounding keeps the promise that matters to training (equal shares; an uneven split idles
 * readers or drops data at the epoch's end) and what deployed stacks already do; the construct
 * warns at synth and the CLI's summary says so when the count changes. The planner may still
 * lower it to the number of files (lambda/packing/planning/plan-core.ts `firstShardCount`).
 */
export function shardCountFor(shardCount: number, consumers: number): number {
  return Math.ceil(shardCount / consumers) * consumers;
}

/** Why the shard count differs from the one asked for, said for people; undefined when it does not. */
export function shardCountRounding(settings: Pick<PackingSettings, 'shardCount' | 'consumers'>, names: PackingSettingNames = PACKING_PROP_NAMES):
string | undefined {
  const { shardCount, consumers } = settings;
  if (shardCount === undefined || shardCount % consumers === 0) return undefined;
  return `${names.shardCount} ${shardCount} is rounded up to ${shardCountFor(shardCount, consumers)}, a multiple of the ${consumers} consumers, `
    + 'so that every reader gets the same number of shards';
}

/**
 * The sizing a version records: the effective target unless an exact count was asked for, so
 * that the CLI and the construct, which may leave the default implicit or render it, record the same thing.
 */
export function sizingOf(settings: Pick<PackingSettings, 'targetShardBytes' | 'shardCount' | 'consumers'>) {
  return {
    targetShardBytes: settings.targetShardBytes ?? null,
    shardCount: settings.shardCount ?? null,
    consumers: settings.consumers,
  };
}

/** The handlers that read the settings, each from its own environment. */
export interface PackingEnvironments {
  readonly planner: Record<string, string>;
  readonly packer: Record<string, string>;
  readonly finalizer: Record<string, string>;
}

/**
 * The environment variables of each handler. `text` renders a number (the construct passes one that
 * keeps CloudFormation tokens).
 */
export function toEnvironment(settings: PackingSettings, text: (value: number) => string = String): PackingEnvironments {
  const env = PACKING_ENV;
  return {
    planner: {
      [env.format]: settings.format,
      [env.seed]: text(settings.seed),
      [env.labels]: settings.labels,
      ...(settings.labelFile !== undefined ? { [env.labelFile]: settings.labelFile } : {}),
      ...(settings.targetShardBytes !== undefined ? { [env.targetShardBytes]: text(settings.targetShardBytes) } : {}),
      ...(settings.shardCount !== undefined ? { [env.shardCount]: text(settings.shardCount) } : {}),
      [env.consumers]: text(settings.consumers),
      ...(settings.parts !== undefined ? { [env.parts]: settings.parts.join(',') } : {}),
    },
    packer: { [env.format]: settings.format, [env.readConcurrency]: text(settings.readConcurrency) },
    finalizer: { [env.retentionDays]: text(settings.retentionDays), [env.allowMissing]: String(settings.allowMissing) },
  };
}

/**
 * The settings in a handler's environment, checked and completed: variables a handler is not given
 * take their defaults. Throws (with every problem, naming the variables) when one is malformed.
 */
export function fromEnvironment(env: Readonly<Record<string, string | undefined>>): PackingSettings {
  const problems: string[] = [];
  const whole = (setting: keyof typeof PACKING_ENV & keyof RawPackingSettings): number | undefined => {
    const text = env[PACKING_ENV[setting]];
    if (text === undefined || text === '') return undefined;
    if (!/^\d+$/.test(text)) problems.push(`${PACKING_ENV_NAMES[setting]} must be a whole number, got '${text}'`);
    return Number(text);
  };
  const word = (name: string) => (env[name] === '' ? undefined : env[name]);
  const allowMissing = word(PACKING_ENV.allowMissing);
  if (allowMissing !== undefined && allowMissing !== 'true' && allowMissing !== 'false') {
    problems.push(`${PACKING_ENV_NAMES.allowMissing} must be 'true' or 'false', got '${allowMissing}'`);
  }
  const raw: RawPackingSettings = {
    format: word(PACKING_ENV.format),
    seed: whole('seed'),
    labels: word(PACKING_ENV.labels),
    labelFile: word(PACKING_ENV.labelFile),
    targetShardBytes: whole('targetShardBytes'),
    shardCount: whole('shardCount'),
    consumers: whole('consumers'),
    readConcurrency: whole('readConcurrency'),
    retentionDays: whole('retentionDays'),
    allowMissing: allowMissing === undefined ? undefined : allowMissing === 'true',
    parts: word(PACKING_ENV.parts)?.split(','),
  };
  problems.push(...(problems.length > 0 ? [] : checkPackingSettings(withoutUndefined(raw), PACKING_ENV_NAMES).map(({ message }) => message)));
  if (problems.length > 0) throw new PackingSettingsError(problems);
  return normalizePackingSettings(withoutUndefined(raw));
}

/** Settings that cannot be used: every problem, each naming the setting, the value and what is allowed. */
export class PackingSettingsError extends Error {
  constructor(public readonly problems: readonly string[]) {
    super(problems.join('; '));
    this.name = 'PackingSettingsError';
  }
}

/** A byte count for people: `0.99999905 MiB (1048575 bytes)`; anything not a number as it is. */
export function describeBytes(value: unknown): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return String(value);
  return `${Number((value / MIB).toFixed(8))} MiB (${value} bytes)`;
}

/** Without a real maximum, the largest exact integer is named only to a value past it. */
function describeRange(min: number, max: number, value: unknown): string {
  return max === Number.MAX_SAFE_INTEGER && !((value as number) > max) ? `≥ ${min}` : `between ${min} and ${max}`;
}

function isWholeNumberIn(value: unknown, min: number, max: number): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max;
}

function withoutUndefined(raw: RawPackingSettings): RawPackingSettings {
  return Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== undefined)) as RawPackingSettings;
}
