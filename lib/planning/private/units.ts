import { MIB } from '../../contract/units';

/** `10.0 GB`, `5.0 KB`, `1.8 TB`: decimal units, as S3, EC2 (NVMe) and SageMaker's guide state sizes. */
export function formatBytes(bytes: number): string {
  const units: Array<[number, string]> = [[1e12, 'TB'], [1e9, 'GB'], [1e6, 'MB'], [1e3, 'KB']];
  for (const [scale, unit] of units) {
    if (bytes >= scale) return `${(bytes / scale).toFixed(1)} ${unit}`;
  }
  return `${Math.round(bytes)} B`;
}

/** `64.0 MiB`: shard sizes, in the binary units of the packer's limits. */
export function formatMiB(bytes: number): string {
  const mib = bytes / MIB;
  return mib >= 1 ? `${mib.toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}

/** `45 s`, `12 min`, `1.4 h`. */
export function formatSeconds(seconds: number): string {
  if (seconds < 1) return seconds === 0 ? '0 s' : 'under 1 s';
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** `~45 s`, `under 1 s` (not `~under 1 s`): an estimate of seconds. */
export function formatAboutSeconds(seconds: number): string {
  return seconds > 0 && seconds < 1 ? formatSeconds(seconds) : `~${formatSeconds(seconds)}`;
}

/** `1 process`, `8 processes`, `1,000 objects`: a count and its noun, singular for one. */
export function formatCountOf(count: number, singular: string, plural = `${singular}s`): string {
  return `${formatCount(count)} ${count === 1 ? singular : plural}`;
}

/** `1,350`: counts with thousands separators. */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** `$1,094`, `$10.10`, `$0.0069`: dollars, with cents below $1,000 and four decimals below a cent. */
export function formatDollars(dollars: number): string {
  if (dollars >= 1000) return `$${Math.round(dollars).toLocaleString('en-US')}`;
  if (dollars >= 0.01 || dollars === 0) return `$${dollars.toFixed(2)}`;
  return `$${dollars.toFixed(4)}`;
}
