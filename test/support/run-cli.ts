import { main } from '../../bin/training-io';

/** What one CLI run printed, and its exit status. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A stream that is not a terminal and keeps what is written to it. */
class CollectingStream {
  public readonly isTTY = false;
  public text = '';

  public write(chunk: string | Uint8Array): boolean {
    this.text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  }
}

/** Runs `training-io` in-process with collecting streams (not terminals). */
export function runCli(...argv: string[]): Promise<CliRun> {
  return runCliWaiting(undefined, ...argv);
}

/** {@link runCli}, with `sleep` standing in for the waits between `launch`'s polls. */
export async function runCliWaiting(sleep: Parameters<typeof main>[3], ...argv: string[]): Promise<CliRun> {
  const out = new CollectingStream();
  const err = new CollectingStream();
  // Only write and isTTY are used; the casts stand in for the rest of a WriteStream.
  const code = await main(argv, out as unknown as Parameters<typeof main>[1], err as unknown as Parameters<typeof main>[2], sleep);
  return { code, stdout: out.text, stderr: err.text };
}
