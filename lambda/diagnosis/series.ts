import { THRESHOLDS } from '../../lib/contract/diagnosis-thresholds';
import type { MetricSeries } from './metric-set';
import { round } from './report-format';

/** A time span in epoch milliseconds (infinite ends when the job never reached or left it). */
export interface Window {
  readonly start: number;
  readonly end: number;
}

/** The series' points within the window, by time. */
export function pointsIn(series: MetricSeries, window: Window): Array<[number, number]> {
  const points: Array<[number, number]> = [];
  series.timestamps.forEach((t, i) => {
    const time = Date.parse(t);
    if (time >= window.start && time <= window.end) points.push([time, series.values[i]]);
  });
  return points.sort((a, b) => a[0] - b[0]);
}

/** Skips the warm-up at the start of training, unless fewer than the minimum samples would be left. */
export function afterWarmup(points: Array<[number, number]>, window: Window): Array<[number, number]> {
  const start = Number.isFinite(window.start) ? window.start : points[0]?.[0];
  if (start === undefined) return points;
  const warm = points.filter(([t]) => t >= start + THRESHOLDS.warmupSeconds * 1000);
  return warm.length >= THRESHOLDS.minimumSamples ? warm : points;
}

/** The series' values by epoch millisecond. */
export function byTime(series: MetricSeries | undefined): Map<number, number> {
  const map = new Map<number, number>();
  series?.timestamps.forEach((t, i) => map.set(Date.parse(t), series.values[i]));
  return map;
}

/** The q-quantile with linear interpolation between the closest ranks (NumPy's default, as Debugger computes it). */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - lower);
}

/** The rounded q-quantile of one measure over the items that have it; undefined when none has. */
export function percentileOf<T>(items: T[], pick: (item: T) => number | undefined, q: number): number | undefined {
  const values = items.map(pick).filter((v): v is number => v !== undefined);
  return values.length ? round(quantile(values, q)) : undefined;
}

/** The entries whose value is defined. */
export function definedOnly<T extends Record<string, number | undefined>>(values: T): { [K in keyof T]?: number } {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: number };
}
