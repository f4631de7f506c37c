/**
 * Checks of what reaches a handler from outside its code: the state machine's event and the
 * environment the construct sets. Every error names the handler, the field and the value.
 */
import { printable, truncated } from '../io/printable';
import { redactSecrets } from '../io/redact-secrets';

/** An event or environment variable a handler cannot work with. */
export class HandlerInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HandlerInputError';
  }
}

/** The event as an object, or an error naming the handler. */
export function eventObject(handler: string, event: unknown): Record<string, unknown> {
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    throw new HandlerInputError(`${handler}: the event must be a JSON object, got ${describe(event)}`);
  }
  return event as Record<string, unknown>;
}

/** A non-empty string field. */
export function stringField(handler: string, event: Record<string, unknown>, field: string): string {
  const value = event[field];
  if (typeof value !== 'string' || value.length === 0) {
    throw new HandlerInputError(`${handler}: event field '${field}' must be a non-empty string, got ${describe(value)}`);
  }
  return value;
}

/** An integer field of at least `min`. */
export function integerField(handler: string, event: Record<string, unknown>, field: string, min: number): number {
  const value = event[field];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new HandlerInputError(`${handler}: event field '${field}' must be an integer of at least ${min}, got ${describe(value)}`);
  }
  return value;
}

/** An optional boolean field (absent → false). */
export function booleanField(handler: string, event: Record<string, unknown>, field: string): boolean {
  const value = event[field];
  if (value === undefined) return false;
  if (typeof value !== 'boolean') {
    throw new HandlerInputError(`${handler}: event field '${field}' must be true or false when given, got ${describe(value)}`);
  }
  return value;
}

/** Characters of an event value an error shows at most. */
const SHOWN_CHARACTERS = 80;

/**
 * A JSON-ish rendering fit for an error message, which ends in logs and in the execution's history:
 * cut short, the secrets a URL can carry redacted, unprintable characters escaped.
 */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)';
  // Redacted whole, then cut: cut first, a secret could lose the '@' that marks it as one.
  return printable(truncated(redactSecrets(JSON.stringify(value) ?? String(value)), SHOWN_CHARACTERS));
}
