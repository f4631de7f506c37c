/** A file that cannot become a record the training readers decode: deterministic for its bytes, so listed as a failure, never retried. */
export class UndecodableImageError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'UndecodableImageError';
  }
}
