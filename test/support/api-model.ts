import * as fs from 'fs';
import * as path from 'path';

/** A service whose botocore API model is in `test/fixtures/aws-api-models/` (sources: the README there). */
export type ApiService = 'sagemaker' | 'fsx' | 'stepfunctions' | 'cloudwatch' | 'events';

/** One way a request object breaks its API model. */
export interface ApiViolation {
  /** Where in the request, e.g. `InputDataConfig[0].DataSource.S3DataSource.S3Uri`. */
  readonly path: string;
  /** What is wrong, naming the shape and the value. */
  readonly message: string;
}

interface MemberRef {
  readonly shape: string;
}

interface Shape {
  readonly type: string;
  readonly required?: string[];
  readonly members?: Record<string, MemberRef>;
  readonly member?: MemberRef;
  readonly key?: MemberRef;
  readonly value?: MemberRef;
  readonly min?: number;
  readonly max?: number;
  readonly pattern?: string;
  readonly enum?: string[];
  readonly union?: boolean;
}

interface Operation {
  readonly input?: MemberRef;
  readonly output?: MemberRef;
}

interface ServiceModel {
  readonly metadata: { readonly targetPrefix?: string; readonly jsonVersion?: string };
  readonly operations: Record<string, Operation>;
  readonly shapes: Record<string, Shape>;
}

const MODELS_DIR = path.resolve(__dirname, '..', 'fixtures', 'aws-api-models');

/** Step Functions marks a field whose value is a JSONPath or intrinsic function with this suffix. */
const DYNAMIC_FIELD_SUFFIX = '.$';

/** What Java's POSIX classes match (US-ASCII only, as without `UNICODE_CHARACTER_CLASS`). */
const POSIX_CLASSES: Record<string, string> = {
  Lower: 'a-z',
  Upper: 'A-Z',
  ASCII: '\\x00-\\x7F',
  Alpha: 'A-Za-z',
  Digit: '0-9',
  Alnum: 'A-Za-z0-9',
  Punct: '\\x21-\\x2F\\x3A-\\x40\\x5B-\\x60\\x7B-\\x7E',
  Graph: '\\x21-\\x7E',
  Print: '\\x20-\\x7E',
  Blank: ' \\t',
  Cntrl: '\\x00-\\x1F\\x7F',
  XDigit: '0-9A-Fa-f',
  Space: ' \\t\\n\\x0B\\f\\r',
};

/**
 * Validates request objects against an official AWS API model (botocore's `service-2.json`),
 * the way the service's own input validation would: required and unknown members, list and
 * map sizes, string lengths, enums and patterns, number types and ranges.
 *
 * The request may come from a synthesized template, so Step Functions `Field.$` keys and
 * CloudFormation intrinsics / unresolved CDK tokens count as present but are not checked.
 */
export class ApiModel {
  /** The model of a service, read once per test file. */
  public static load(service: ApiService): ApiModel {
    let model = ApiModel.cache.get(service);
    if (!model) {
      const file = path.join(MODELS_DIR, `${service}-service-2.json`);
      model = new ApiModel(service, JSON.parse(fs.readFileSync(file, 'utf-8')) as ServiceModel);
      ApiModel.cache.set(service, model);
    }
    return model;
  }

  private static readonly cache = new Map<ApiService, ApiModel>();

  private readonly patterns = new Map<string, RegExp | Error>();

  private constructor(public readonly service: ApiService, private readonly model: ServiceModel) {}

  /** The JSON-protocol target prefix, e.g. `SageMaker` in `X-Amz-Target: SageMaker.DescribeTrainingJob`. */
  public get targetPrefix(): string | undefined {
    return this.model.metadata.targetPrefix;
  }

  /** The JSON protocol version, `1.0` or `1.1`. */
  public get jsonVersion(): string | undefined {
    return this.model.metadata.jsonVersion;
  }

  /**
   * The input and output shape names of an operation.
   *
   * @throws when the model has no such operation
   */
  public operation(name: string): { input?: string; output?: string } {
    const operation = Object.prototype.hasOwnProperty.call(this.model.operations, name) ? this.model.operations[name] : undefined;
    if (!operation) throw new Error(`${this.service} API model has no operation '${name}'`);
    return { input: operation.input?.shape, output: operation.output?.shape };
  }

  /** Names of every shape in the model. */
  public get shapeNames(): string[] {
    return Object.keys(this.model.shapes);
  }

  /**
   * Every way `value` breaks shape `shapeName`; empty when it is valid.
   *
   * @throws when the model has no such shape (a mistake in the test, not in the value)
   */
  public validate(shapeName: string, value: unknown): ApiViolation[] {
    const violations: ApiViolation[] = [];
    this.check(this.shape(shapeName), shapeName, value, '', violations);
    return violations;
  }

  /**
   * The pattern of a string shape compiled as JavaScript with the semantics of Java's
   * `Matcher.matches()`, the reason it cannot be, or undefined when the shape has no pattern.
   */
  public compilePattern(shapeName: string): RegExp | Error | undefined {
    const pattern = this.shape(shapeName).pattern;
    if (pattern === undefined) {
      return undefined;
    }
    let compiled = this.patterns.get(shapeName);
    if (!compiled) {
      try {
        const { source, flags } = translateJavaPattern(pattern);
        compiled = new RegExp(`^(?:${source})$`, `u${flags}`);
      } catch (e) {
        compiled = e instanceof Error ? e : new Error(String(e));
      }
      this.patterns.set(shapeName, compiled);
    }
    return compiled;
  }

  private shape(name: string): Shape {
    const shape = Object.prototype.hasOwnProperty.call(this.model.shapes, name) ? this.model.shapes[name] : undefined;
    if (!shape) {
      throw new Error(`${this.service} API model has no shape '${name}'`);
    }
    return shape;
  }

  private check(shape: Shape, shapeName: string, value: unknown, at: string, out: ApiViolation[]): void {
    if (isDeployTimeValue(value)) {
      return;
    }
    const report = (message: string): void => {
      out.push({ path: at, message: `${shapeName}: ${message}` });
    };
    switch (shape.type) {
      case 'structure':
        return this.checkStructure(shape, shapeName, value, at, out);
      case 'list':
        if (!Array.isArray(value)) {
          return report(`expected a list, got ${describeValue(value)}`);
        }
        checkCount(shape, value.length, 'items', report);
        value.forEach((item, i) => this.checkRef(shape.member!, item, `${at}[${i}]`, out));
        return;
      case 'map':
        if (!isPlainObject(value)) {
          return report(`expected a map, got ${describeValue(value)}`);
        }
        checkCount(shape, Object.keys(value).length, 'entries', report);
        for (const [key, entry] of Object.entries(value)) {
          this.checkRef(shape.key!, key, `${at}[${JSON.stringify(key)}]`, out);
          this.checkRef(shape.value!, entry, `${at}[${JSON.stringify(key)}]`, out);
        }
        return;
      case 'string':
        return this.checkString(shape, shapeName, value, report);
      case 'integer':
      case 'long':
      case 'float':
      case 'double':
        return checkNumber(shape, value, report);
      case 'boolean':
        if (typeof value !== 'boolean') {
          report(`expected a boolean, got ${describeValue(value)}`);
        }
        return;
      case 'timestamp':
        if (typeof value !== 'string' && typeof value !== 'number') {
          report(`expected a timestamp (ISO 8601 string or epoch seconds), got ${describeValue(value)}`);
        }
        return;
      case 'blob':
        if (typeof value !== 'string') {
          report(`expected a blob (base64 string), got ${describeValue(value)}`);
        }
        return;
      default:
        return report(`shape type '${shape.type}' is not supported by this validator`);
    }
  }

  private checkRef(ref: MemberRef, value: unknown, at: string, out: ApiViolation[]): void {
    this.check(this.shape(ref.shape), ref.shape, value, at, out);
  }

  private checkStructure(shape: Shape, shapeName: string, value: unknown, at: string, out: ApiViolation[]): void {
    if (!isPlainObject(value)) {
      out.push({ path: at, message: `${shapeName}: expected a structure, got ${describeValue(value)}` });
      return;
    }
    const members = shape.members ?? {};
    const present = new Set<string>();
    for (const [key, memberValue] of Object.entries(value)) {
      const dynamic = key.endsWith(DYNAMIC_FIELD_SUFFIX);
      const name = dynamic ? key.slice(0, -DYNAMIC_FIELD_SUFFIX.length) : key;
      const memberPath = at ? `${at}.${key}` : key;
      const ref = Object.prototype.hasOwnProperty.call(members, name) ? members[name] : undefined;
      if (!ref) {
        out.push({ path: memberPath, message: `${shapeName} has no member '${name}'` });
        continue;
      }
      if (present.has(name)) {
        out.push({ path: memberPath, message: `${shapeName}: '${name}' is set both as '${name}' and as '${name}${DYNAMIC_FIELD_SUFFIX}'` });
        continue;
      }
      present.add(name);
      if (!dynamic) {
        this.checkRef(ref, memberValue, memberPath, out);
      }
    }
    for (const name of shape.required ?? []) {
      if (!present.has(name)) {
        out.push({ path: at ? `${at}.${name}` : name, message: `${shapeName}: required member '${name}' is missing` });
      }
    }
    if (shape.union && present.size !== 1) {
      out.push({ path: at, message: `${shapeName} is a union: exactly one member must be set, got ${present.size} (${[...present].join(', ')})` });
    }
  }

  private checkString(shape: Shape, shapeName: string, value: unknown, report: (message: string) => void): void {
    if (typeof value !== 'string') {
      return report(`expected a string, got ${describeValue(value)}`);
    }
    // Smithy and botocore count Unicode code points, not UTF-16 units.
    const length = [...value].length;
    if (shape.min !== undefined && length < shape.min) {
      report(`length ${length} is below the minimum ${shape.min}: ${JSON.stringify(value)}`);
    }
    if (shape.max !== undefined && length > shape.max) {
      report(`length ${length} is above the maximum ${shape.max}: ${JSON.stringify(value)}`);
    }
    if (shape.enum && !shape.enum.includes(value)) {
      report(`${JSON.stringify(value)} is not one of ${shape.enum.join(', ')}`);
    }
    const pattern = this.compilePattern(shapeName);
    if (pattern instanceof Error) {
      report(`pattern ${JSON.stringify(shape.pattern)} cannot be checked in JavaScript (${pattern.message})`);
    } else if (pattern && !pattern.test(value)) {
      report(`${JSON.stringify(value)} does not match pattern ${JSON.stringify(shape.pattern)}`);
    }
  }
}

/** A Java regex rewritten for JavaScript: the source to compile with the `u` flag plus `flags`. */
interface TranslatedPattern {
  readonly source: string;
  readonly flags: string;
}

/**
 * Rewrites a Java regex into an equivalent JavaScript one for the `u` flag.
 *
 * Java accepts escapes of any non-alphanumeric character (`\_`, `\ `), POSIX classes
 * (`\p{Alnum}`), quantified anchors (`${1,128}`) and inline flags (`(?i)`); the `u` flag
 * rejects all four. Inline flags become JavaScript flags when they lead the pattern and so
 * apply to all of it. Nested classes and intersections have no JavaScript equivalent and
 * throw; what is left that JavaScript cannot parse (inline flags part-way through) fails in
 * the `RegExp` constructor.
 */
function translateJavaPattern(pattern: string): TranslatedPattern {
  const leadingFlags = /^(\^?)\(\?([ims]+)\)/.exec(pattern);
  const flags = leadingFlags ? leadingFlags[2] : '';
  if (leadingFlags) {
    pattern = leadingFlags[1] + pattern.slice(leadingFlags[0].length);
  }
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined) {
        throw new Error('pattern ends with a lone backslash');
      }
      if ((next === 'p' || next === 'P') && pattern[i + 2] === '{') {
        const end = pattern.indexOf('}', i + 3);
        if (end < 0) {
          throw new Error(`unterminated \\${next}{ at offset ${i}`);
        }
        out += translatePropertyClass(next === 'P', pattern.slice(i + 3, end), inClass);
        i = end;
      } else if (next === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const quoted = pattern.slice(i + 2, end < 0 ? undefined : end);
        out += [...quoted].map(literal).join('');
        i = end < 0 ? pattern.length : end + 1;
      } else if (/[A-Za-z0-9]/.test(next)) {
        out += c + next;
        i++;
      } else {
        const char = String.fromCodePoint(pattern.codePointAt(i + 1)!);
        out += literal(char);
        i += char.length;
      }
      continue;
    }
    if (inClass) {
      if (c === '[') {
        throw new Error(`nested character class at offset ${i} (Java union) has no JavaScript equivalent`);
      }
      if (c === '&' && pattern[i + 1] === '&') {
        throw new Error(`character class intersection '&&' at offset ${i} has no JavaScript equivalent`);
      }
      if (c === ']') {
        inClass = false;
      }
      out += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      if (pattern[i + 1] === '^') {
        out += '^';
        i++;
      }
      continue;
    }
    if (c === '^' || c === '$') {
      // A quantified anchor is the anchor itself (min ≥ 1) or nothing (min 0): it matches no text.
      const quantifier = /^(?:\{(\d+)(?:,\d*)?\}|[*+?])/.exec(pattern.slice(i + 1));
      if (quantifier) {
        const min = quantifier[1] !== undefined ? Number(quantifier[1]) : quantifier[0] === '+' ? 1 : 0;
        out += min >= 1 ? c : '';
        i += quantifier[0].length;
        continue;
      }
    }
    out += c;
  }
  if (inClass) {
    throw new Error('unterminated character class');
  }
  return { source: out, flags };
}

function translatePropertyClass(negated: boolean, name: string, inClass: boolean): string {
  const posix = POSIX_CLASSES[name.startsWith('Is') && POSIX_CLASSES[name.slice(2)] ? name.slice(2) : name];
  if (posix === undefined) {
    return `\\${negated ? 'P' : 'p'}{${name}}`;
  }
  if (!negated) {
    return inClass ? posix : `[${posix}]`;
  }
  if (inClass) {
    throw new Error(`\\P{${name}} inside a character class has no JavaScript equivalent`);
  }
  return `[^${posix}]`;
}

function literal(char: string): string {
  return `\\u{${char.codePointAt(0)!.toString(16)}}`;
}

function checkCount(shape: Shape, count: number, unit: string, report: (message: string) => void): void {
  if (shape.min !== undefined && count < shape.min) {
    report(`${count} ${unit}, below the minimum ${shape.min}`);
  }
  if (shape.max !== undefined && count > shape.max) {
    report(`${count} ${unit}, above the maximum ${shape.max}`);
  }
}

function checkNumber(shape: Shape, value: unknown, report: (message: string) => void): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return report(`expected ${shape.type === 'integer' ? 'an' : 'a'} ${shape.type}, got ${describeValue(value)}`);
  }
  if ((shape.type === 'integer' || shape.type === 'long') && !Number.isInteger(value)) {
    return report(`expected a whole number, got ${value}`);
  }
  if (shape.min !== undefined && value < shape.min) {
    report(`${value} is below the minimum ${shape.min}`);
  }
  if (shape.max !== undefined && value > shape.max) {
    report(`${value} is above the maximum ${shape.max}`);
  }
}

/**
 * True for values only known at deploy time: a CloudFormation intrinsic (`{ Ref }`,
 * `{ 'Fn::...' }`) or a string holding an unresolved CDK token.
 */
function isDeployTimeValue(value: unknown): boolean {
  if (typeof value === 'string') {
    return value.includes('${Token[');
  }
  if (!isPlainObject(value)) {
    return false;
  }
  const keys = Object.keys(value);
  return keys.length === 1 && (keys[0] === 'Ref' || keys[0].startsWith('Fn::'));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeValue(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'a list';
  }
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}
