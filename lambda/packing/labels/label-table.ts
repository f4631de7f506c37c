import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import { parse } from 'csv-parse';
import { LABEL_FILE_EXTENSIONS, LABEL_FILE_FIELDS, labelFileExtensionOf, MAX_LABEL_FILE_BYTES } from '../../../lib/contract/label-file';
import { sampleKeyOf } from '../../../lib/contract/sample-parts';
import { parseBoundedJson } from '../../io/bounded-json';
import type { ManifestLabelSource } from '../manifest';
import { labelMapOf } from '../planning/label-map';
import { PlanError } from '../planning/plan-error';
import type { SourceFile } from '../planning/plan-types';

/** A label file that cannot be used: names the file, the line, the value and what is allowed. Raised before anything is packed. */
export class LabelFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LabelFileError';
  }
}

/** Rows that name no listed file: the run goes on, and says how many (and the first few). */
export interface UnmatchedRows {
  readonly count: number;
  /** Up to {@link UNMATCHED_SHOWN} of their sample keys, in file order. */
  readonly first: readonly string[];
}

/** Unmatched rows named in messages (the count is always whole). */
export const UNMATCHED_SHOWN = 5;

/**
 * A label file read: each sample key (`sampleKeyOf`: the path below the source up to the first dot of
 * the name, so that a row may give `train/0001` or `train/0001.jpg`) with its class, the classes
 * numbered in code-point order of their names as folder labels are (labelMapOf). The classes are every
 * label the file names, whether or not a listed file has it: the numbering is the file's, the same for
 * every split packed with it.
 */
export class LabelTable {
  private readonly seen: Uint8Array;

  private constructor(
    /** Where it was read, `file:///…` or `s3://…`: named in errors, failures and the manifest. */
    public readonly uri: string,
    /** SHA-256 of its bytes (hex): a changed file packs the dataset again. */
    public readonly sha256: string,
    /** Class name → index, names sorted: the manifest's `labels`. */
    public readonly labelMap: Record<string, number>,
    private readonly rowOf: ReadonlyMap<string, number>,
    private readonly classOfRow: Int32Array,
  ) {
    this.seen = new Uint8Array(classOfRow.length);
  }

  /**
   * A table of rows whose classes are numbered by first appearance (`classNames[classOfRow[row]]`): renumbered
   * here, in place, to the sorted label map.
   */
  public static of(uri: string, sha256: string, rowOf: ReadonlyMap<string, number>, classNames: readonly string[], classOfRow: Int32Array): LabelTable {
    const labelMap = labelMapOf(classNames);
    for (let row = 0; row < classOfRow.length; row++) classOfRow[row] = labelMap[classNames[classOfRow[row]]];
    return new LabelTable(uri, sha256, labelMap, rowOf, classOfRow);
  }

  /** Sample keys the file labels. */
  public get rows(): number {
    return this.rowOf.size;
  }

  /** The class index of a listed file (its key relative to the source), or undefined when no row names its sample; marks the row as used. */
  public labelOfFile(relativeKey: string): number | undefined {
    const row = this.rowOf.get(sampleKeyOf(relativeKey).key);
    if (row === undefined) return undefined;
    this.seen[row] = 1;
    return this.classOfRow[row];
  }

  /** The rows no {@link labelOfFile} has asked for: rows naming a sample the listing does not have. */
  public unmatchedRows(): UnmatchedRows {
    let count = 0;
    const first: string[] = [];
    for (const [sample, row] of this.rowOf) {
      if (this.seen[row] === 1) continue;
      count++;
      if (first.length < UNMATCHED_SHOWN) first.push(sample);
    }
    return { count, first };
  }
}

/**
 * Reads a label file from its bytes (`chunks`, streamed: never held whole): a CSV (`.csv`, RFC 4180
 * quoting, parsed by csv-parse, a header naming the columns `key` and `label`, other columns ignored) or
 * JSON lines (`.jsonl`, one `{"key": ..., "label": ...}` object a line), by the extension of `uri`.
 * Refused, naming the file, the line and the value: another extension, more than MAX_LABEL_FILE_BYTES,
 * a malformed row, an empty key or label, and one sample given two different labels.
 */
export async function readLabelTable(uri: string, chunks: AsyncIterable<Buffer>, maxBytes = MAX_LABEL_FILE_BYTES): Promise<LabelTable> {
  const extension = labelFileExtensionOf(uri);
  if (extension === undefined) {
    throw new LabelFileError(`label file ${uri}: the name must end in ${LABEL_FILE_EXTENSIONS.map((each) => `'${each}'`).join(' or ')} `
      + '(a CSV with the header key,label, or JSON lines {"key": ..., "label": ...})');
  }
  const hash = createHash('sha256');
  const rows = new RowCollector(uri);
  const counted = countedChunks(uri, chunks, hash, maxBytes);
  if (extension === '.csv') await readCsvRows(uri, counted, rows);
  else await readJsonLines(uri, counted, rows);
  return rows.table(hash.digest('hex'));
}

/** The chunks, hashed and counted on the way; more than the limit fails the read. */
async function* countedChunks(uri: string, chunks: AsyncIterable<Buffer>, hash: ReturnType<typeof createHash>, maxBytes: number): AsyncGenerator<Buffer> {
  let bytes = 0;
  for await (const chunk of chunks) {
    bytes += chunk.length;
    if (bytes > maxBytes) throw labelFileTooLarge(uri, undefined, maxBytes);
    hash.update(chunk);
    yield chunk;
  }
}

/** The error of a label file over the limit: `size` when known before reading (a file's, an object's), else it was found reading. */
export function labelFileTooLarge(uri: string, size: number | undefined, maxBytes = MAX_LABEL_FILE_BYTES): LabelFileError {
  return new LabelFileError(`label file ${uri}: ${size === undefined ? 'more than that' : `${(size / 2 ** 20).toFixed(1)} MiB`} is over the `
    + `${Number((maxBytes / 2 ** 20).toFixed(3))} MiB a label file may have; refused before packing (split the dataset, or pack it in parts)`);
}

async function readCsvRows(uri: string, chunks: AsyncIterable<Buffer>, rows: RowCollector): Promise<void> {
  const parser = parse({ bom: true, info: true, skip_empty_lines: true });
  const piped = pipeline(Readable.from(chunks), parser);
  piped.catch(() => undefined);
  let columns: { key: number; label: number } | undefined;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (!columns) {
        columns = { key: record.indexOf(LABEL_FILE_FIELDS.key), label: record.indexOf(LABEL_FILE_FIELDS.label) };
        if (columns.key < 0 || columns.label < 0) {
          throw new LabelFileError(`label file ${uri} line ${info.lines}: the header must name the columns 'key' and 'label' (e.g. key,label), `
            + `got ${JSON.stringify(record.join(',').slice(0, 200))}`);
        }
        continue;
      }
      rows.add(record[columns.key], record[columns.label], info.lines);
    }
    await piped;
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    if (!code.startsWith('CSV_')) throw error;
    throw new LabelFileError(`label file ${uri}: ${(error as Error).message}; expected a CSV with the header key,label and one `
      + 'row per sample, a field holding a comma, a quote or a line break quoted as RFC 4180 says ("a,b", "say ""hi""")');
  }
  if (!columns) throw new LabelFileError(`label file ${uri} is empty: expected the header key,label and a row per sample`);
}

async function readJsonLines(uri: string, chunks: AsyncIterable<Buffer>, rows: RowCollector): Promise<void> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let line = 0;
  const take = (text: string) => {
    line++;
    const trimmed = text.endsWith('\r') ? text.slice(0, -1) : text;
    if (trimmed.trim() !== '') addJsonLine(uri, trimmed, line, rows);
  };
  for await (const chunk of chunks) {
    pending += decoder.write(chunk);
    let newline = pending.indexOf('\n');
    let start = 0;
    for (; newline >= 0; newline = pending.indexOf('\n', start)) {
      take(pending.slice(start, newline));
      start = newline + 1;
    }
    pending = pending.slice(start);
  }
  pending += decoder.end();
  if (pending !== '') take(pending);
}

function addJsonLine(uri: string, text: string, line: number, rows: RowCollector): void {
  const name = `label file ${uri} line ${line}`;
  let row: unknown;
  try {
    row = parseBoundedJson(name, text);
  } catch (error) {
    throw new LabelFileError(`${name}: ${(error as Error).message.replace(`${name}: `, '')}; expected one JSON object a line, `
      + `{"key": "train/0001", "label": "cat"}, got ${JSON.stringify(text.slice(0, 200))}`);
  }
  if (typeof row !== 'object' || row === null || Array.isArray(row)) {
    throw new LabelFileError(`${name}: expected a JSON object {"key": ..., "label": ...}, got ${JSON.stringify(text.slice(0, 200))}`);
  }
  const fields = row as Record<string, unknown>;
  rows.add(fields[LABEL_FILE_FIELDS.key], fields[LABEL_FILE_FIELDS.label], line);
}

/**
 * The rows as they come: a sample key → its row, each row's class (by first appearance) and line, in
 * typed arrays (a map entry per row and 8 bytes beside it: 10 million rows fit a planner Lambda).
 */
class RowCollector {
  private readonly rowOf = new Map<string, number>();
  private readonly classIndex = new Map<string, number>();
  private classOfRow = new Int32Array(1024);
  private lineOfRow = new Uint32Array(1024);

  constructor(private readonly uri: string) {}

  public add(key: unknown, label: unknown, line: number): void {
    const where = `label file ${this.uri} line ${line}`;
    if (typeof key !== 'string' || key.trim() === '') {
      throw new LabelFileError(`${where}: key must be the sample's path below the source, a non-empty string such as 'train/0001' `
        + `or 'train/0001.jpg', got ${JSON.stringify(key)}`);
    }
    if (typeof label !== 'string' || label.trim() === '') {
      throw new LabelFileError(`${where}: label of '${key}' must be a class name, a non-empty string such as 'cat', got ${JSON.stringify(label)}`);
    }
    const sample = sampleKeyOf(key).key;
    let cls = this.classIndex.get(label);
    if (cls === undefined) {
      cls = this.classIndex.size;
      this.classIndex.set(label, cls);
    }
    const earlier = this.rowOf.get(sample);
    if (earlier !== undefined) {
      if (this.classOfRow[earlier] === cls) return;
      const earlierLabel = [...this.classIndex].find(([, index]) => index === this.classOfRow[earlier])![0];
      throw new LabelFileError(`${where}: sample '${sample}' is labelled '${label}', but line ${this.lineOfRow[earlier]} labels it `
        + `'${earlierLabel}': a sample has one label (its files share the key up to the first dot of their names)`);
    }
    const row = this.rowOf.size;
    if (row === this.classOfRow.length) this.grow();
    this.rowOf.set(sample, row);
    this.classOfRow[row] = cls;
    this.lineOfRow[row] = line;
  }

  public table(sha256: string): LabelTable {
    if (this.rowOf.size === 0) throw new LabelFileError(`label file ${this.uri} has no rows: expected a row per sample, key and label`);
    return LabelTable.of(this.uri, sha256, this.rowOf, [...this.classIndex.keys()], this.classOfRow.slice(0, this.rowOf.size));
  }

  private grow(): void {
    const classes = new Int32Array(this.classOfRow.length * 2);
    classes.set(this.classOfRow);
    this.classOfRow = classes;
    const lines = new Uint32Array(this.lineOfRow.length * 2);
    lines.set(this.lineOfRow);
    this.lineOfRow = lines;
  }
}

/** The class of each file by the table (labels `file`); a file no row labels fails the plan, naming it (LabelledSource lists those as failures first). */
export function labelsByTable(files: readonly SourceFile[], table: LabelTable): Int32Array {
  const labels = new Int32Array(files.length);
  for (let i = 0; i < files.length; i++) {
    const label = table.labelOfFile(files[i].key);
    if (label === undefined) throw new PlanError(`no row of the label file ${table.uri} labels '${files[i].key}' (its sample '${sampleKeyOf(files[i].key).key}')`);
    labels[i] = label;
  }
  return labels;
}

/** What the manifest records of the table, once the listing has been labelled (its unmatched rows counted). */
export function labelSourceOf(table: LabelTable): ManifestLabelSource {
  return { mode: 'file', file: table.uri, sha256: table.sha256, rows: table.rows, unmatchedRows: table.unmatchedRows().count };
}
