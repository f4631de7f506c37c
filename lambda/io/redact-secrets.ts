/**
 * Secrets that a URL can carry, taken out of text meant for people (error messages, logs): the
 * user and password of an endpoint (`https://user:password@host/`) and the signature, credential
 * and session token of a presigned URL's query. The one redaction every message that may show a
 * URL or an endpoint goes through: the CLI's error output and the engine's S3 errors. The Python
 * readers' redaction is to take out the same two kinds of secret.
 */

/** What stands in for a secret. */
export const REDACTED = '***';

/** `scheme://user[:password]@`: everything between `//` and `@` before the host (no `/` in between). */
const USER_INFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;

/** The query parameters of a presigned URL that let its holder act (SigV4 and SigV2 names). */
const PRESIGNED_PARAMETERS = /([?&](?:X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token|Signature|AWSAccessKeyId|x-amz-security-token)=)[^&\s#'"<>]*/gi;

/** `text` with every endpoint credential and presigned query value replaced by `***`. */
export function redactSecrets(text: string): string {
  return text.replace(USER_INFO, `$1${REDACTED}@`).replace(PRESIGNED_PARAMETERS, `$1${REDACTED}`);
}
