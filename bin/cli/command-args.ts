import type { ParseArgsConfig } from 'node:util';
import { parseArgs } from 'node:util';
import type { S3ClientFlags } from './dataset-location';
import { checkS3Flags } from './dataset-location';
import { didYouMean } from './did-you-mean';
import { UsageError } from './usage-error';
import { quoted } from '../../lambda/io/printable';

/** The flags that several commands take, added to a command's own by {@link parseCommandArgs}. */
export interface SharedFlags {
  /** Printed by `-h`/`--help`, which then ends the command (exit 0) before any other check. */
  readonly usage: string;
  /** Whether the command takes `--endpoint-url URL` and `--region R`, checked here whether or not it calls AWS. */
  readonly endpoint?: boolean;
}

/** `--help` was given: the command ends here, and `main` prints its usage (one place for that early return). */
export class HelpRequested extends Error {
  constructor(public readonly usage: string) {
    super('help requested');
    this.name = 'HelpRequested';
  }
}

/** A command's own parsed flags, and the endpoint flags where it takes them (else both undefined). */
export type CommandArgs<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>> & { readonly endpoint: S3ClientFlags };

const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;
const ENDPOINT_OPTIONS = { 'endpoint-url': { type: 'string' }, 'region': { type: 'string' } } as const;

/**
 * `util.parseArgs` of a command's own options plus the `shared` flags (`--help`, and `--endpoint-url`
 * and `--region`), with its errors (unknown option, missing value) turned into a UsageError; an unknown
 * option is named with the closest known one ("did you mean"). `--help` throws {@link HelpRequested}.
 * A negative number after an option that takes a value is that value (`--poll -3`), so that the
 * option's own check says what is allowed: parseArgs would take it for an option and call it ambiguous.
 */
export function parseCommandArgs<T extends ParseArgsConfig>(config: T, shared?: SharedFlags): CommandArgs<T> {
  const options = { ...config.options, ...(shared ? HELP_OPTION : {}), ...(shared?.endpoint ? ENDPOINT_OPTIONS : {}) };
  const parsed = parseKnownArgs({ ...config, options });
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (shared && values.help) throw new HelpRequested(shared.usage);
  const endpoint: S3ClientFlags = { endpointUrl: values['endpoint-url'] as string | undefined, region: values.region as string | undefined };
  checkS3Flags(endpoint);
  return { ...parsed, endpoint } as unknown as CommandArgs<T>;
}

function parseKnownArgs(config: ParseArgsConfig): ReturnType<typeof parseArgs> {
  const args = joinNegativeValues(config.args ?? [], config.options ?? {});
  try {
    return parseArgs({ ...config, args });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw unknownOption(config, args) ?? new UsageError((error as Error).message);
    if (code?.startsWith('ERR_PARSE_ARGS')) throw new UsageError((error as Error).message);
    throw error;
  }
}

/**
 * The first option the command does not know, with the closest it does. parseArgs' own message names
 * the option but ends in a hint about positionals starting with '-', which is rarely what was meant.
 */
function unknownOption(config: ParseArgsConfig, args: string[]): UsageError | undefined {
  const options = config.options ?? {};
  const { tokens } = parseArgs({ ...config, args, strict: false, tokens: true });
  const known = Object.entries(options).flatMap(([name, option]) => [`--${name}`, ...(option.short ? [`-${option.short}`] : [])]);
  // A known short option's token carries its long name (`-h` → help).
  const unknown = tokens.find((token) => token.kind === 'option' && !(token.name in options));
  if (unknown?.kind !== 'option') return undefined;
  return new UsageError(`unknown option ${quoted(unknown.rawName)}${didYouMean(unknown.rawName, known)}`);
}

/** `--flag -3` → `--flag=-3` where `--flag` takes a value. */
function joinNegativeValues(args: readonly string[], options: NonNullable<ParseArgsConfig['options']>): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const name = /^--([^=]+)$/.exec(args[i])?.[1];
    if (name !== undefined && options[name]?.type === 'string' && /^-\.?\d/.test(args[i + 1] ?? '')) {
      joined.push(`${args[i]}=${args[++i]}`);
    } else {
      joined.push(args[i]);
    }
  }
  return joined;
}
