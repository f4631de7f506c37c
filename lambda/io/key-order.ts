/**
 * Compares two keys in Unicode code-point order, which is also the byte order of their UTF-8
 * encodings (the order S3 lists keys in). JavaScript's `<` compares UTF-16 code units instead:
 * it sorts U+E000..U+FFFF after the surrogate pairs of U+10000 and above. Not locale order.
 */
export function compareCodePointOrder(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      return x >= 0xd800 && y >= 0xd800 ? codePointRank(x) - codePointRank(y) : x - y;
    }
  }
  return a.length - b.length;
}

/** Lists with fewer descents than 1 in this many are left to the engine's sort, which merges runs. */
const FEW_RUNS = 1024;
/** Buckets of samplesort hold about this many items, so each bucket sorts within the CPU caches. */
const ITEMS_PER_BUCKET = 2048;
/** Samples per bucket: more samples, more even buckets. */
const OVERSAMPLING = 8;

/**
 * Returns the items sorted by key in code-point order (the input is not changed). Keys need not
 * be unique; equal keys end up next to each other.
 *
 * Uses the engine's string comparison when no key holds a surrogate (then code-unit and
 * code-point order agree). Listings usually arrive sorted or in a few sorted runs (S3 lists in
 * key order): those are checked in one pass or merged by the engine's TimSort. Other orders go
 * through a samplesort: one pass deals the items into buckets by binary search over splitter keys
 * taken from a sample, then each small bucket is sorted on its own. On 10 million shuffled keys
 * this is several times faster than one big sort, whose comparisons chase pointers all over the
 * heap. Either way the result is the one sorted order, so the choice never shows in the plan.
 */
export function sortByKeyInCodePointOrder<T extends { readonly key: string }>(items: readonly T[]): T[] {
  const compareKeys = items.some((item) => SURROGATE.test(item.key)) ? compareCodePointOrder : compareCodeUnitOrder;
  const compareItems = (a: T, b: T) => compareKeys(a.key, b.key);

  let descents = 0;
  for (let i = 1; i < items.length; i++) {
    if (compareKeys(items[i - 1].key, items[i].key) > 0) descents++;
  }
  if (descents === 0) return items.slice();
  if (descents < items.length / FEW_RUNS || items.length < 2 * ITEMS_PER_BUCKET) {
    return items.slice().sort(compareItems);
  }
  return sampleSort(items, compareKeys, compareItems);
}

/** Sorts strings in place in code-point order (see {@link compareCodePointOrder}); returns them. */
export function sortStringsInCodePointOrder(strings: string[]): string[] {
  // Without surrogates the engine's default comparison (code units) is the same order, and faster.
  return strings.some((value) => SURROGATE.test(value)) ? strings.sort(compareCodePointOrder) : strings.sort();
}

function sampleSort<T extends { readonly key: string }>(
  items: readonly T[], compareKeys: (a: string, b: string) => number, compareItems: (a: T, b: T) => number,
): T[] {
  const bucketCount = Math.floor(items.length / ITEMS_PER_BUCKET);
  const step = Math.max(1, Math.floor(items.length / (bucketCount * OVERSAMPLING)));
  const sample: string[] = [];
  for (let i = 0; i < items.length; i += step) sample.push(items[i].key);
  sample.sort(compareKeys);
  const splitters: string[] = [];
  for (let b = 1; b < bucketCount; b++) splitters.push(sample[Math.floor((b * sample.length) / bucketCount)]);

  // Bucket b holds the keys k with splitters[b - 1] <= k < splitters[b]: equal keys share a bucket.
  const bucketOf = new Uint32Array(items.length);
  const bucketStart = new Float64Array(bucketCount + 1);
  for (let i = 0; i < items.length; i++) {
    const key = items[i].key;
    let low = 0;
    let high = splitters.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareKeys(splitters[middle], key) <= 0) low = middle + 1;
      else high = middle;
    }
    bucketOf[i] = low;
    bucketStart[low + 1]++;
  }
  for (let b = 1; b <= bucketCount; b++) bucketStart[b] += bucketStart[b - 1];

  const dealt = new Array<T>(items.length);
  const next = bucketStart.slice(0, bucketCount);
  for (let i = 0; i < items.length; i++) dealt[next[bucketOf[i]]++] = items[i];

  const sorted = new Array<T>(items.length);
  for (let b = 0; b < bucketCount; b++) {
    const bucket = dealt.slice(bucketStart[b], bucketStart[b + 1]).sort(compareItems);
    for (let j = 0; j < bucket.length; j++) sorted[bucketStart[b] + j] = bucket[j];
  }
  return sorted;
}

function compareCodeUnitOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const SURROGATE = /[\ud800-\udfff]/;

/** Moves surrogates (code points ≥ U+10000) above U+E000..U+FFFF, keeping each group's order. */
function codePointRank(codeUnit: number): number {
  return codeUnit >= 0xe000 ? codeUnit - 0x800 : codeUnit + 0x2000;
}
