/**
 * How long a library Lambda function may run, packers included: Lambda's ceiling, 15 minutes. The
 * construct sets it on each function, and the engine's leftover rule (lambda/packing/leftovers.ts)
 * reads it as the longest a packer attempt can write into a version's folder.
 */
export const HANDLER_TIMEOUT_SECONDS = 15 * 60;
