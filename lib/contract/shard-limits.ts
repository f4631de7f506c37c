import { MIB } from './units';

/**
 * Shards are 1–128 MiB, 64 MiB by default: large enough that per-object costs (S3 requests, FIFO
 * switches, file opens) vanish, small enough to spread over many readers. One packer Lambda writes
 * one shard, so the ceiling also bounds a packer's memory and a Pipe-mode FIFO's restart cost
 * (ARCHITECTURE.md "Record formats").
 */
export const MIN_SHARD_BYTES = 1 * MIB;

/** The default target shard size (lib/contract/packing-settings.ts `normalizePackingSettings` applies it to a run). */
export const DEFAULT_SHARD_BYTES = 64 * MIB;

/** The largest target shard size, and the ceiling of any shard of more than one file. */
export const MAX_SHARD_BYTES = 128 * MIB;
