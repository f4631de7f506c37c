/**
 * Calls `action` on every item with at most `limit` calls in flight, the results in item order:
 * S3 calls are latency-bound, so a few at once, but not thousands. After a failure no item starts,
 * and the call rejects with the first failure once the calls in flight are done.
 */
/** Deletes in flight at once: one request each (DeleteObjects needs Content-MD5 on some S3 implementations). */
export const DELETES_AT_ONCE = 16;

export async function mapLimited<T, R>(items: readonly T[], limit: number, action: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { readonly error: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const index = next++;
      try {
        results[index] = await action(items[index], index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
  return results;
}
