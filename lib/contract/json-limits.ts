import { MIB } from './units';

/**
 * The most nesting a JSON document the engine, the CLI or the readers parse may have. The deepest
 * they write is 4 (manifest → shards → shard → field); a document 200,000 levels deep would end a
 * recursive parser (Python's json) in a bare RecursionError instead of an error naming the file.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The largest JSON document parsed: a manifest of 10 million records in 8,000 shards is under 4 MB,
 * and one of 100,000 shards with its failures far under this. Parsing takes about 5 times a
 * document's size in memory, so a larger one is refused before it is parsed.
 */
export const MAX_JSON_BYTES = 256 * MIB;
