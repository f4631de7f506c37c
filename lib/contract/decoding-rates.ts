// The one table of what a CPU core decodes (issue #37). Everything that needs a per-worker decoding
// rate reads it here or from its Python copy: the planner (lib/instances/private/loader-rules.ts
// scales it by sample size), train.py's `--loader auto` prior (container/trainer/loader_choice.py,
// checked equal by test/planning/decoding-rate-table.test.ts), and the benches, which print each
// measured per-worker rate over this figure (bench/container-gpu, bench/loader-cpu/handover.py).
// The docs cite this file, never a figure of their own.

/**
 * The mean JPEG size the rate was measured at: ~90 KB, 250–480 × 300–640 pixels (the benches'
 * synthetic JPEGs; ImageNet's training JPEGs average ~110 KB).
 */
export const DECODE_RATE_SAMPLE_BYTES = 90_000;

/**
 * Samples/s one loader worker (one core) decodes AND augments (random resized crop to 224, flip) at
 * that size: 314–350 measured with one worker on an H100 machine's CPUs (bench/container-gpu "small
 * files, 1 worker", 2026-11). Hosts differ: the H200 machine's sandboxed CPUs made ~200 (its cpu
 * path fed 3,046 samples/s with 15 workers, 2026-11-28), so the planner's figure is an estimate and
 * `train:data_wait_fraction`, or `--loader auto`'s measurement, tells a job the truth.
 */
export const CPU_DECODE_AUGMENT_PER_WORKER = 330;

/**
 * Seconds of a sample's time that do not grow with its bytes: reading, the crop's resize to 224,
 * collation. An estimate: with JPEGs resized beforehand to 32 KB, 7 workers fed 3,207 samples/s
 * (GPU-bound, so ≥ 458 per worker), which the size model (~714 per worker) does not contradict.
 */
export const DECODE_FIXED_SECONDS_PER_SAMPLE = 0.0005;
