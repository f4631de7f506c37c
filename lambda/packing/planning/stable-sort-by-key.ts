/** Below this many entries, merge sort beats radix sort's fixed cost per pass. */
const RADIX_MIN_LENGTH = 512;
const RADIX_BITS = 11;
const RADIX = 1 << RADIX_BITS;
/** Runs this short are sorted by insertion before merging. */
const INSERTION_RUN = 16;

/**
 * Sorts `indices[0..length)` by `keys[index]` ascending; entries with equal keys keep their order
 * (stable), so the caller decides ties by the order it passes in. `keys` must be safe integers
 * (byte and record counts, negated for a descending order). O(n log n) merge sort for short
 * lists; LSD radix sort on `key - min` for longer ones (linear: one pass per 11 bits of the
 * key range, which is narrow for sizes of small files and for shard loads within one file of
 * each other). No comparator callbacks; `scratch` holds at least `length` entries.
 */
export function stableSortByKey(indices: Uint32Array, length: number, keys: Float64Array, scratch: Uint32Array): void {
  if (length < RADIX_MIN_LENGTH) {
    mergeSort(indices, length, keys, scratch);
  } else {
    radixSort(indices, length, keys, scratch);
  }
}

function radixSort(indices: Uint32Array, length: number, keys: Float64Array, scratch: Uint32Array): void {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < length; i++) {
    const key = keys[indices[i]];
    if (key < min) min = key;
    if (key > max) max = key;
  }
  const span = max - min;
  if (span === 0) return;
  const counts = new Uint32Array(RADIX);
  let from = indices;
  let to = scratch;
  for (let shift = 0; 2 ** shift <= span; shift += RADIX_BITS) {
    counts.fill(0);
    for (let i = 0; i < length; i++) counts[digit(keys[from[i]] - min, shift, span)]++;
    let start = 0;
    for (let d = 0; d < RADIX; d++) {
      const count = counts[d];
      counts[d] = start;
      start += count;
    }
    for (let i = 0; i < length; i++) {
      const index = from[i];
      to[counts[digit(keys[index] - min, shift, span)]++] = index;
    }
    const swapped = from;
    from = to;
    to = swapped;
  }
  if (from !== indices) indices.set(from.subarray(0, length));
}

/** The RADIX_BITS-bit digit of `value` at `shift`; 32-bit integer arithmetic where the range allows. */
function digit(value: number, shift: number, span: number): number {
  return span < 2 ** 32 ? (value >>> shift) & (RADIX - 1) : Math.floor(value / 2 ** shift) % RADIX;
}

function mergeSort(indices: Uint32Array, length: number, keys: Float64Array, scratch: Uint32Array): void {
  for (let start = 0; start < length; start += INSERTION_RUN) {
    insertionSort(indices, start, Math.min(start + INSERTION_RUN, length), keys);
  }
  let from = indices;
  let to = scratch;
  for (let width = INSERTION_RUN; width < length; width *= 2) {
    for (let left = 0; left < length; left += 2 * width) {
      merge(from, to, left, Math.min(left + width, length), Math.min(left + 2 * width, length), keys);
    }
    const swapped = from;
    from = to;
    to = swapped;
  }
  if (from !== indices) indices.set(from.subarray(0, length));
}

function insertionSort(indices: Uint32Array, start: number, end: number, keys: Float64Array): void {
  for (let i = start + 1; i < end; i++) {
    const moving = indices[i];
    const key = keys[moving];
    let j = i - 1;
    while (j >= start && keys[indices[j]] > key) {
      indices[j + 1] = indices[j];
      j--;
    }
    indices[j + 1] = moving;
  }
}

function merge(from: Uint32Array, to: Uint32Array, left: number, middle: number, right: number, keys: Float64Array): void {
  let i = left;
  let j = middle;
  let out = left;
  while (i < middle && j < right) {
    // Take from the right run only when strictly smaller: equal keys keep their order.
    to[out++] = keys[from[j]] < keys[from[i]] ? from[j++] : from[i++];
  }
  while (i < middle) to[out++] = from[i++];
  while (j < right) to[out++] = from[j++];
}
