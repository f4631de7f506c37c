/** What a progress display is told: items (files, shards) and their bytes. */
export interface ProgressState {
  readonly filesDone: number;
  readonly totalFiles: number;
  readonly bytesDone: number;
  readonly totalBytes: number;
}

/**
 * A one-line progress bar on a terminal (files, MB/s, ETA), redrawn at most 10 times a second;
 * plain lines every few seconds when the output is not a terminal (CI logs, pipes).
 */
export class ProgressDisplay {
  private readonly started = Date.now();
  private lastDraw = 0;
  private last?: ProgressState;

  /** `unit`: what `filesDone` counts, as shown (`files`, `shards`). */
  constructor(private readonly stream: NodeJS.WriteStream, private readonly label: string, private readonly unit = 'files') {}

  public update(state: ProgressState): void {
    this.last = state;
    const now = Date.now();
    if (now - this.lastDraw < (this.stream.isTTY ? 100 : 5000)) return;
    this.draw(state, now);
  }

  /** Draws the final state and ends the bar's line on a terminal. */
  public finish(): void {
    if (this.last) this.draw(this.last, Date.now());
    if (this.stream.isTTY) this.stream.write('\n');
  }

  private draw(state: ProgressState, now: number): void {
    this.lastDraw = now;
    const line = this.format(state, now);
    if (this.stream.isTTY) {
      this.stream.write(`\r${line}\x1b[K`);
    } else {
      this.stream.write(`${line}\n`);
    }
  }

  private format(state: ProgressState, now: number): string {
    const seconds = Math.max((now - this.started) / 1000, 1e-3);
    const rate = state.bytesDone / seconds;
    const fraction = state.totalBytes > 0 ? state.bytesDone / state.totalBytes : state.filesDone / Math.max(state.totalFiles, 1);
    const eta = rate > 0 ? (state.totalBytes - state.bytesDone) / rate : 0;
    const width = 24;
    const filled = Math.min(width, Math.round(fraction * width));
    const bar = this.stream.isTTY ? `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ` : '';
    return `${this.label} ${bar}${(fraction * 100).toFixed(0).padStart(3)}%  ` +
      `${state.filesDone}/${state.totalFiles} ${this.unit}  ${(rate / 1e6).toFixed(1)} MB/s  ETA ${formatDuration(eta)}`;
  }
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)}s`;
  const minutes = Math.floor(seconds / 60);
  return minutes < 60 ? `${minutes}m${String(Math.round(seconds % 60)).padStart(2, '0')}s` : `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}
