import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { S3Client } from '@aws-sdk/client-s3';

/**
 * The S3 client the engine's sources and sinks are made for, in the Lambda handlers and the CLI
 * alike. One attempt per call: S3Source and S3Sink retry themselves (`withS3Retry`), and SDK
 * retries on top would multiply the attempts. No checksum work by the SDK: the sink hands S3 the
 * CRC32C it computed natively, and the SDK's JavaScript checksums (on requests, and validating
 * responses) would cost more CPU than the small objects they cover.
 */
export function engineS3Client(config: S3ClientConfig = {}): S3Client {
  return new S3Client({
    ...config,
    maxAttempts: 1,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}
