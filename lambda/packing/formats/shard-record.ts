/** One record found by a shard reader (`readTfRecords`, `readRecordIo`). */
export interface ShardRecord {
  /** Byte offset of the record's first framing byte in the shard (what the index files hold). */
  readonly offset: number;
  /** Bytes the record takes on disk, framing and padding included. */
  readonly size: number;
  /**
   * The record's data. A view into the shard when the record is stored in one piece (no copy); a new
   * buffer only for a RecordIO record split around magic words.
   */
  readonly payload: Buffer;
}
