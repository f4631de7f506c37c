/** How the report writes numbers: one place, so that the verdicts and the Markdown agree. */

export function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function pct(value: number | undefined): string {
  return value === undefined ? 'n/a' : `${round(value)} %`;
}

export function mbps(value: number): string {
  return `${round(value)} MB/s`;
}

/** `1h 02m`, `12m 05s`, `40s`. */
export function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}
