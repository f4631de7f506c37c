import { createHash } from 'node:crypto';
import type { CompletedPart, S3Client} from '@aws-sdk/client-s3';
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, DeleteObjectCommand, GetObjectCommand,
  HeadObjectCommand, PutObjectCommand, ServerSideEncryption, UploadPartCommand,
} from '@aws-sdk/client-s3';
import { crc32c } from '@node-rs/crc32';
import { crc32cBase64 } from './s3-checksum';
import type { S3Location } from './s3-location';
import { getObjectBytes, listPages, S3Prefix } from './s3-location';
import type { S3RetryOptions} from './s3-retry';
import { isS3NotFound, s3ErrorCode, s3ErrorStatus, withS3Retry } from './s3-retry';
import { s3Uri } from './s3-uri';
import type { ObjectWriter, PackingSink, StoredObject } from './storage';
import { ObjectNotFoundError } from './storage';
import { MIB } from '../../lib/contract/units';

/** S3's smallest part (all but the last) and largest part. */
const MIN_PART_BYTES = 5 * MIB;
const MAX_PART_BYTES = 5 * 1024 * MIB;

/** Options of an `S3Sink`. */
export interface S3SinkOptions extends S3Location {
  /** Encrypt every object written with this KMS key (SSE-KMS). @default - the bucket's default encryption */
  readonly kmsKeyId?: string;
  /** Bytes per multipart part (5 MiB–5 GiB); smaller objects are written with one PutObject. @default 8 MiB */
  readonly partSize?: number;
  /** Parts uploaded at once per object; `write` waits while this many are in flight. @default 4 */
  readonly partConcurrency?: number;
}

/**
 * An S3 prefix as the destination of a packing run. Large objects stream out as multipart uploads
 * (parts uploaded in parallel while the shard is still being written) and appear only when the
 * upload completes. Every object carries a CRC32C computed here with the native `crc32c`, so the
 * SDK never computes its own (its JavaScript CRC32C is slow).
 */
export class S3Sink extends S3Prefix implements PackingSink {
  private readonly partSize: number;
  private readonly partConcurrency: number;
  private readonly encryption: { ServerSideEncryption?: ServerSideEncryption; SSEKMSKeyId?: string };

  constructor(private readonly options: S3SinkOptions) {
    super(options);
    this.partSize = options.partSize ?? 8 * MIB;
    if (!Number.isInteger(this.partSize) || this.partSize < MIN_PART_BYTES || this.partSize > MAX_PART_BYTES) {
      throw new Error(`partSize must be between 5 MiB and 5 GiB (S3's part limits), got ${options.partSize} bytes`);
    }
    this.partConcurrency = options.partConcurrency ?? 4;
    if (!Number.isInteger(this.partConcurrency) || this.partConcurrency < 1) {
      throw new Error(`partConcurrency must be a positive integer, got ${options.partConcurrency}`);
    }
    this.encryption = options.kmsKeyId ? { ServerSideEncryption: ServerSideEncryption.aws_kms, SSEKMSKeyId: options.kmsKeyId } : {};
  }

  public scoped(prefix: string): S3Sink {
    return new S3Sink({ ...this.options, prefix: this.prefix + prefix });
  }

  public async create(key: string): Promise<ObjectWriter> {
    return new MultipartWriter(this, this.prefix + key);
  }

  public async put(key: string, data: Buffer): Promise<void> {
    await this.putObject(this.prefix + key, data, crc32c(data));
  }

  /**
   * PutObject with `If-None-Match: *` (S3 conditional writes): 412 PreconditionFailed means the key
   * exists. A store that answers 501 NotImplemented cannot publish atomically: that is an error, not
   * a silent unconditional write.
   */
  public async createIfAbsent(key: string, data: Buffer): Promise<boolean> {
    const fullKey = this.prefix + key;
    const uri = s3Uri(this.bucket, fullKey);
    try {
      await withS3Retry(uri, () => this.client.send(new PutObjectCommand({
        Bucket: this.bucket, Key: fullKey, Body: data, ContentLength: data.length,
        ContentMD5: createHash('md5').update(data).digest('base64'), ChecksumCRC32C: crc32cBase64(crc32c(data)),
        IfNoneMatch: '*', ...this.encryption,
      })), this.retry);
      return true;
    } catch (error) {
      const code = s3ErrorCode(error);
      if (code === 'PreconditionFailed' || s3ErrorStatus(error) === 412) return false;
      if (code === 'NotImplemented' || s3ErrorStatus(error) === 501) {
        throw new Error(`${uri}: the S3 store does not support conditional writes (PutObject with If-None-Match: *), `
          + 'which publishing a dataset version atomically needs; Amazon S3 has them since August 2024', { cause: error });
      }
      throw error;
    }
  }

  public get(key: string): Promise<Buffer> {
    return getObjectBytes(this.client, this.bucket, this.prefix + key, this.retry).catch((error: unknown) => {
      if (!isS3NotFound(error)) throw error;
      throw new ObjectNotFoundError(s3Uri(this.bucket, this.prefix + key), s3ErrorCode(error) ?? 'NoSuchKey', (error as Error).message);
    });
  }

  public async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    for await (const page of listPages(this.client, this.bucket, this.prefix + prefix, this.pageSize, this.retry)) {
      for (const object of page.Contents ?? []) {
        if (object.Key) keys.push(object.Key.slice(this.prefix.length));
      }
    }
    return keys;
  }

  public async modifiedAt(key: string): Promise<number> {
    const fullKey = this.prefix + key;
    const uri = s3Uri(this.bucket, fullKey);
    const head = await withS3Retry(uri, () => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: fullKey })), this.retry)
      .catch((error: unknown) => {
        if (!isS3NotFound(error)) throw error;
        throw new ObjectNotFoundError(uri, s3ErrorCode(error) ?? 'NotFound', (error as Error).message);
      });
    if (!head.LastModified) throw new Error(`${uri}: HeadObject answered without LastModified`);
    return head.LastModified.getTime();
  }

  /**
   * HeadObject with the checksum S3 keeps: this sink hands S3 a whole-object CRC-32C with every
   * object (FULL_OBJECT for multipart uploads), which S3 checked on arrival and reports here. A store
   * that keeps none (or a composite one, of an object written elsewhere) has the object read back.
   */
  public async stat(key: string): Promise<StoredObject> {
    const fullKey = this.prefix + key;
    const uri = s3Uri(this.bucket, fullKey);
    const head = await withS3Retry(uri, () => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: fullKey, ChecksumMode: 'ENABLED' })), this.retry)
      .catch((error: unknown) => {
        if (!isS3NotFound(error)) throw error;
        throw new ObjectNotFoundError(uri, s3ErrorCode(error) ?? 'NotFound', (error as Error).message);
      });
    if (head.ChecksumCRC32C && head.ChecksumType !== 'COMPOSITE' && head.ContentLength !== undefined) {
      return { bytes: head.ContentLength, crc32c: head.ChecksumCRC32C };
    }
    // Streamed: a finalizer reads many shards of up to 128 MiB at once, which whole in memory would outgrow its Lambda.
    return withS3Retry(uri, async () => {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: fullKey }));
      let bytes = 0;
      let crc = 0;
      for await (const chunk of (response.Body ?? []) as AsyncIterable<Uint8Array>) {
        bytes += chunk.length;
        crc = crc32c(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength), crc);
      }
      return { bytes, crc32c: crc32cBase64(crc) };
    }, this.retry);
  }

  public async delete(key: string): Promise<void> {
    // One by one: DeleteObjects needs Content-MD5 on some S3 implementations, which current SDKs no longer send.
    const fullKey = this.prefix + key;
    await withS3Retry(s3Uri(this.bucket, fullKey), () => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: fullKey })), this.retry)
      .catch((error: unknown) => {
        if (!isS3NotFound(error)) throw error;
      });
  }

  /** @internal PutObject with Content-MD5 (checked by every S3 implementation) and our CRC32C (checked by AWS). */
  public async putObject(fullKey: string, data: Buffer, crc: number): Promise<void> {
    const contentMd5 = createHash('md5').update(data).digest('base64');
    await withS3Retry(s3Uri(this.bucket, fullKey), () => this.client.send(new PutObjectCommand({
      Bucket: this.bucket, Key: fullKey, Body: data, ContentLength: data.length, ContentMD5: contentMd5,
      ChecksumCRC32C: crc32cBase64(crc), ...this.encryption,
    })), this.retry);
  }

  /** @internal */
  public multipart(): MultipartSettings {
    return {
      client: this.client, bucket: this.bucket, retry: this.retry, partSize: this.partSize,
      partConcurrency: this.partConcurrency, encryption: this.encryption,
    };
  }
}

interface MultipartSettings {
  readonly client: S3Client;
  readonly bucket: string;
  readonly retry: S3RetryOptions | undefined;
  readonly partSize: number;
  readonly partConcurrency: number;
  readonly encryption: { ServerSideEncryption?: ServerSideEncryption; SSEKMSKeyId?: string };
}

/**
 * One object written in parts. Bytes are copied into a part until it is full; full parts upload in parallel
 * (at most `partConcurrency`, `write` waits for room). The multipart upload starts with the first
 * full part: an object smaller than one part is written by `complete()` with a single PutObject.
 */
class MultipartWriter implements ObjectWriter {
  private readonly settings: MultipartSettings;
  private readonly uri: string;
  private part: Buffer | undefined;
  private partBytes = 0;
  private crc = 0;
  private uploadId: Promise<string> | undefined;
  private readonly parts: CompletedPart[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private failure: { readonly error: unknown } | undefined;
  private finished = false;

  constructor(private readonly sink: S3Sink, private readonly key: string) {
    this.settings = sink.multipart();
    this.uri = s3Uri(this.settings.bucket, key);
  }

  public async write(chunks: Buffer[]): Promise<void> {
    this.checkWritable();
    const { partSize } = this.settings;
    for (const chunk of chunks) {
      this.crc = crc32c(chunk, this.crc);
      // Copied into the part being filled: the caller reuses its chunks once write resolves.
      let copied = 0;
      while (copied < chunk.length) {
        this.part ??= Buffer.allocUnsafe(partSize);
        const n = chunk.copy(this.part, this.partBytes, copied);
        copied += n;
        this.partBytes += n;
        if (this.partBytes === partSize) await this.startPart(this.takePart());
      }
    }
  }

  public async complete(): Promise<void> {
    this.checkWritable();
    this.finished = true;
    if (!this.uploadId) {
      await this.sink.putObject(this.key, this.takePart(), this.crc);
      return;
    }
    if (this.partBytes > 0) await this.startPart(this.takePart());
    await this.settle();
    if (this.failure) throw this.failure.error;
    const uploadId = await this.uploadId;
    const { client, bucket, retry } = this.settings;
    let attempts = 0;
    await withS3Retry(this.uri, async () => {
      attempts++;
      try {
        await client.send(new CompleteMultipartUploadCommand({
          Bucket: bucket, Key: this.key, UploadId: uploadId,
          // Part checksums went with each UploadPart; a FULL_OBJECT upload needs only the whole one here.
          MultipartUpload: { Parts: this.parts.map(({ PartNumber, ETag }) => ({ PartNumber, ETag })) },
          ChecksumType: 'FULL_OBJECT', ChecksumCRC32C: crc32cBase64(this.crc),
        }));
      } catch (error) {
        // An earlier attempt may have completed the upload and lost only its answer.
        if (attempts > 1 && isS3NotFound(error) && await this.objectExists()) return;
        throw error;
      }
    }, retry);
  }

  public async abort(): Promise<void> {
    this.finished = true;
    this.part = undefined;
    this.partBytes = 0;
    await this.settle();
    if (!this.uploadId) return;
    // The upload may have failed to start: then there is nothing to abort.
    const uploadId = await this.uploadId.catch(() => undefined);
    if (uploadId === undefined) return;
    const { client, bucket, retry } = this.settings;
    await withS3Retry(this.uri, () => client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: this.key, UploadId: uploadId })), retry)
      .catch((error: unknown) => {
        if (!isS3NotFound(error)) throw error;
      });
  }

  private checkWritable(): void {
    if (this.failure) throw this.failure.error;
    if (this.finished) throw new Error(`${this.uri}: already completed or aborted`);
  }

  /** Waits for room, then uploads one part in the background; its failure is kept for the next call. */
  private async startPart(body: Buffer): Promise<void> {
    while (this.inFlight.size >= this.settings.partConcurrency) await Promise.race(this.inFlight);
    if (this.failure) throw this.failure.error;
    const { client, bucket, retry, encryption } = this.settings;
    this.uploadId ??= withS3Retry(this.uri, async () => {
      const created = await client.send(new CreateMultipartUploadCommand({
        Bucket: bucket, Key: this.key, ChecksumAlgorithm: 'CRC32C', ChecksumType: 'FULL_OBJECT', ...encryption,
      }));
      if (!created.UploadId) throw new Error('CreateMultipartUpload answered no UploadId');
      return created.UploadId;
    }, retry);
    const partNumber = this.parts.length + 1;
    const part: CompletedPart = { PartNumber: partNumber, ChecksumCRC32C: crc32cBase64(crc32c(body)) };
    this.parts.push(part);
    const upload = this.uploadId
      .then((uploadId) => withS3Retry(`${this.uri} (part ${partNumber})`, () => client.send(new UploadPartCommand({
        Bucket: bucket, Key: this.key, UploadId: uploadId, PartNumber: partNumber, Body: body, ContentLength: body.length,
        ChecksumCRC32C: part.ChecksumCRC32C,
      })), retry))
      .then((uploaded) => {
        part.ETag = uploaded.ETag;
      }, (error: unknown) => {
        this.failure ??= { error };
      })
      .finally(() => this.inFlight.delete(upload));
    this.inFlight.add(upload);
  }

  private async settle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  /** The bytes of the part being filled, which the next write starts afresh (uploads keep theirs). */
  private takePart(): Buffer {
    const filled = this.part?.subarray(0, this.partBytes) ?? Buffer.alloc(0);
    this.part = undefined;
    this.partBytes = 0;
    return filled;
  }

  private async objectExists(): Promise<boolean> {
    const { client, bucket } = this.settings;
    return client.send(new HeadObjectCommand({ Bucket: bucket, Key: this.key })).then(() => true, () => false);
  }
}
