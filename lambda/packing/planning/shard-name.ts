/**
 * The base name of a shard and of its index file: `part-00007-of-00128`. Both numbers have five
 * digits, or as many as the count has when it is larger, so names sort in shard order.
 */
export function shardName(index: number, count: number): string {
  const width = Math.max(5, String(count).length);
  return `part-${String(index).padStart(width, '0')}-of-${String(count).padStart(width, '0')}`;
}
