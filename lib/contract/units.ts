// The contract between lib/, lambda/ and bin/: plain values, no imports from outside lib/contract/,
// so the esbuild bundles of the handlers and the CLI take it without any construct code.

/** Bytes in one MiB: shard sizes, Lambda memory and the job's volumes count in binary units. */
export const MIB = 2 ** 20;

/** Bytes in one GiB: FSx for Lustre capacity and volume sizes. */
export const GIB = 2 ** 30;
