import { MIB } from './units';

// Labels from a file beside the data (labels `file`): what the file may be, for the construct, the
// CLI and the planner alike. The reading is lambda/packing/labels/label-table.ts.

/** The label file's formats, by the extension of its name (lower case): a CSV with the header `key,label`, or JSON lines `{"key": ..., "label": ...}`. */
export const LABEL_FILE_EXTENSIONS = ['.csv', '.jsonl'] as const;
/** A label file's format. */
export type LabelFileExtension = (typeof LABEL_FILE_EXTENSIONS)[number];

/** The columns of a CSV label file's header, and the fields of a JSON-lines row. */
export const LABEL_FILE_FIELDS = { key: 'key', label: 'label' } as const;

/**
 * The largest label file read. The planner holds every row in a map (about 100 bytes a row in V8
 * beside the key's characters) next to the listing: 512 MiB is some 10 million rows of 40-character
 * keys, the most samples one planner Lambda plans (lambda/shard-planner/plan-dataset.ts), at about
 * 1.5 GB of the planner's 4 GiB. A larger file is refused before it is parsed, naming the limit.
 */
export const MAX_LABEL_FILE_BYTES = 512 * MIB;

/** The format of a label file from its name, or undefined when its extension is not one of {@link LABEL_FILE_EXTENSIONS}. */
export function labelFileExtensionOf(name: string): LabelFileExtension | undefined {
  const lower = name.toLowerCase();
  return LABEL_FILE_EXTENSIONS.find((extension) => lower.endsWith(extension) && lower.length > extension.length);
}

/** Why `name` cannot be a label file (`setting`: how the caller calls it), or undefined when it can. */
export function labelFileProblem(setting: string, name: string): string | undefined {
  if (typeof name !== 'string' || name.trim() === '') return `${setting} must name a label file, got ${JSON.stringify(name)}`;
  if (labelFileExtensionOf(name) !== undefined) return undefined;
  return `${setting} ${JSON.stringify(name)} must end in ${LABEL_FILE_EXTENSIONS.map((extension) => `'${extension}'`).join(' or ')} `
    + '(a CSV with the header key,label, or JSON lines {"key": ..., "label": ...})';
}
