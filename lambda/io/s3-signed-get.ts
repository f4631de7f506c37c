import * as http from 'node:http';
import * as https from 'node:https';
import type { S3Client } from '@aws-sdk/client-s3';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import type { EndpointRequest } from './s3-client';
import { endpointOf, engineS3Timeouts, namingEndpoint } from './s3-client';
import type { UnansweredWait } from './s3-no-answer';
import { S3NoAnswerError } from './s3-no-answer';
import { sdkGetObject } from './s3-location';
import type { S3RetryOptions } from './s3-retry';
import { withS3Retry } from './s3-retry';
import { s3Uri } from './s3-uri';

/** Members larger than this are read in ranges of this size: a reset costs one range, not the object, and the ranges load side by side. */
export const RANGE_BYTES = 8 * 1024 * 1024;
/** Ranges of one member in flight at once. */
const RANGES_IN_FLIGHT = 4;
/**
 * Connections per host at most, as the SDK's NodeHttpHandler allows by default: more reads than this
 * wait for a connection rather than open one each (a local Swift answers 503 to 64 at once).
 */
const MAX_SOCKETS = 50;

/** Where and how the GETs of one bucket go, as the client's own GetObject would send them. */
interface BucketEndpoint {
  readonly request: EndpointRequest & { readonly protocol: string; readonly hostname: string };
  /** `/bucket` in path style, `''` in virtual-host style, with any path of a custom endpoint before it. */
  readonly basePath: string;
  readonly signer: SignatureV4;
  readonly agent: http.Agent;
  readonly transport: typeof http | typeof https;
}

/**
 * GetObject without the SDK's per-call machinery: the same signature (the SDK's SigV4 signer, the
 * client's credential provider, called per request, so credentials refresh as the SDK's do), the
 * same endpoint (resolved once per bucket by the client itself: its region, endpoint and
 * `forcePathStyle`), over keep-alive connections, with the client's timeouts (engineS3Timeouts).
 * Measured on 5 KB objects against one server: the SDK's GetObject spends 0.45–0.88 ms of client
 * CPU per object, a signed GET 0.1–0.2 ms; on a Lambda function, whose CPU is a fraction of a core,
 * that is what bounds a packer on small files. Buckets whose endpoint needs another signature
 * (S3 Express directory buckets, multi-region access points) are read with the SDK's GetObject.
 * Errors carry what the SDK's would (`$metadata.httpStatusCode`, the S3 `Code`, the network `code`),
 * so that one classification (s3-retry.ts) serves both.
 */
export class S3SignedGet {
  private readonly endpoints = new Map<string, Promise<BucketEndpoint | undefined>>();
  private readonly timeouts: Required<ReturnType<typeof engineS3Timeouts>>;
  private agents: { http?: http.Agent; https?: https.Agent } = {};

  constructor(private readonly client: S3Client) {
    this.timeouts = engineS3Timeouts(client);
  }

  /** The object's bytes, with retries (a range at a time when `listedSize` is above RANGE_BYTES). */
  public async read(bucket: string, key: string, listedSize: number | undefined, retry: S3RetryOptions | undefined): Promise<Buffer> {
    const uri = s3Uri(bucket, key);
    const endpoint = await this.endpoint(bucket);
    if (!endpoint) return withS3Retry(uri, () => sdkGetObject(this.client, bucket, key), retry);
    if (listedSize === undefined || listedSize <= RANGE_BYTES) return withS3Retry(uri, () => this.get(endpoint, key), retry);
    return this.readRanges(endpoint, uri, key, retry);
  }

  /** First range, which tells the object's size and ETag; then the others side by side, into one buffer. */
  private async readRanges(endpoint: BucketEndpoint, uri: string, key: string, retry: S3RetryOptions | undefined): Promise<Buffer> {
    const first = await withS3Retry(uri, () => this.get(endpoint, key, { start: 0 }), retry);
    const total = first.total ?? first.bytes.length;
    if (total <= first.bytes.length) return first.bytes;
    const whole = Buffer.allocUnsafe(total);
    first.bytes.copy(whole, 0);
    let next = first.bytes.length;
    const worker = async () => {
      while (next < total) {
        const start = next;
        next += RANGE_BYTES;
        // If-Match: a range of an object replaced meanwhile fails (412) rather than mixing two versions.
        await withS3Retry(uri, () => this.get(endpoint, key, { start, etag: first.etag }, whole), retry);
      }
    };
    await Promise.all(Array.from({ length: RANGES_IN_FLIGHT }, worker));
    return whole;
  }

  /** One signed GET of the whole object, or of a range written into `into` at its offset. */
  private get(endpoint: BucketEndpoint, key: string): Promise<Buffer>;
  private get(endpoint: BucketEndpoint, key: string, range: Range, into?: Buffer): Promise<RangeRead>;
  private async get(endpoint: BucketEndpoint, key: string, range?: Range, into?: Buffer): Promise<Buffer | RangeRead> {
    const headers: Record<string, string> = { 'host': hostHeader(endpoint.request), 'x-amz-content-sha256': EMPTY_SHA256 };
    if (range) headers.range = `bytes=${range.start}-${range.start + RANGE_BYTES - 1}`;
    if (range?.etag) headers['if-match'] = range.etag;
    const signed = await endpoint.signer.sign({
      method: 'GET',
      protocol: endpoint.request.protocol,
      hostname: endpoint.request.hostname,
      port: endpoint.request.port,
      path: `${endpoint.basePath}/${encodeKey(key)}`,
      query: {},
      headers,
    });
    const response = await this.send(endpoint, signed.path, signed.headers as Record<string, string>);
    if (!range) return response.bytes;
    const total = Number(/\/(\d+)$/.exec(response.headers['content-range'] ?? '')?.[1]);
    if (into) response.bytes.copy(into, range.start);
    return { bytes: response.bytes, total: Number.isFinite(total) ? total : undefined, etag: response.headers.etag };
  }

  /** Sends one request; resolves with a 2xx answer's body, rejects with an error shaped like the SDK's. */
  private send(endpoint: BucketEndpoint, path: string, headers: Record<string, string>): Promise<{ bytes: Buffer; headers: http.IncomingHttpHeaders }> {
    const { connectionTimeoutMs, idleTimeoutMs, requestTimeoutMs } = this.timeouts;
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (error: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(overall);
        request.destroy();
        reject(namingEndpoint(error, endpoint.request));
      };
      const request = endpoint.transport.request({
        agent: endpoint.agent,
        method: 'GET',
        protocol: endpoint.request.protocol,
        hostname: endpoint.request.hostname,
        port: endpoint.request.port,
        path,
        headers,
      }, (response) => {
        collectBody(response).then(({ bytes }) => {
          if (settled) return;
          settled = true;
          clearTimeout(overall);
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve({ bytes, headers: response.headers });
          else reject(httpError(status, bytes, response.headers));
        }, fail);
      });
      const unanswered = (wait: UnansweredWait, ms: number) => () => fail(new S3NoAnswerError('GetObject', wait, ms, endpointOf(endpoint.request)));
      const overall = setTimeout(unanswered('request', requestTimeoutMs), requestTimeoutMs);
      request.setTimeout(idleTimeoutMs, unanswered('idle', idleTimeoutMs));
      request.on('socket', (socket) => {
        if (!socket.connecting) return;
        const connecting = setTimeout(unanswered('connect', connectionTimeoutMs), connectionTimeoutMs);
        socket.once('connect', () => clearTimeout(connecting));
        socket.once('close', () => clearTimeout(connecting));
      });
      request.on('error', fail);
      request.end();
    });
  }

  private endpoint(bucket: string): Promise<BucketEndpoint | undefined> {
    let endpoint = this.endpoints.get(bucket);
    if (!endpoint) {
      endpoint = this.resolve(bucket);
      // A failed resolution (a region provider that threw) is tried again by the next read.
      endpoint.catch(() => this.endpoints.delete(bucket));
      this.endpoints.set(bucket, endpoint);
    }
    return endpoint;
  }

  /**
   * Lets the client build a GetObject request for the bucket and stops it before signing: the host,
   * path and signing scope are then the SDK's own, for any region, endpoint or addressing style.
   */
  private async resolve(bucket: string): Promise<BucketEndpoint | undefined> {
    const command = new GetObjectCommand({ Bucket: bucket, Key: SAMPLE_KEY });
    let built: { request: BuiltRequest; authScheme?: AuthScheme } | undefined;
    command.middlewareStack.add((_next, context) => async (args) => {
      const endpointV2 = (context as { endpointV2?: { properties?: { authSchemes?: AuthScheme[] } } }).endpointV2;
      built = { request: args.request as BuiltRequest, authScheme: endpointV2?.properties?.authSchemes?.[0] };
      throw STOP;
    }, { step: 'build', priority: 'low', name: 'resolveSignedGetEndpoint' });
    await this.client.send(command).catch((error: unknown) => {
      if (error !== STOP) throw error;
    });
    if (!built) return undefined;
    const { request, authScheme } = built;
    if (authScheme && authScheme.name !== 'sigv4') return undefined;
    if (!request.path.endsWith(`/${SAMPLE_KEY}`)) return undefined;
    const isHttps = request.protocol === 'https:';
    const agent = isHttps
      ? (this.agents.https ??= new https.Agent({ keepAlive: true, scheduling: 'lifo', maxSockets: MAX_SOCKETS }))
      : (this.agents.http ??= new http.Agent({ keepAlive: true, scheduling: 'lifo', maxSockets: MAX_SOCKETS }));
    return {
      request: { protocol: request.protocol, hostname: request.hostname, port: request.port },
      basePath: request.path.slice(0, -SAMPLE_KEY.length - 1),
      signer: new SignatureV4({
        credentials: this.client.config.credentials,
        region: authScheme?.signingRegion ?? await this.client.config.region(),
        service: authScheme?.signingName ?? 's3',
        sha256: this.client.config.sha256,
        // S3 signs the path as sent, not encoded twice (the endpoint's disableDoubleEncoding).
        uriEscapePath: false,
        applyChecksum: true,
      }),
      agent,
      transport: isHttps ? https : http,
    };
  }
}

const SIGNED_GETS = new WeakMap<S3Client, S3SignedGet>();

/** The signed GETs of a client: one per client, so that every source on it shares its connections and endpoints. */
export function signedGetFor(client: S3Client): S3SignedGet {
  let signedGet = SIGNED_GETS.get(client);
  if (!signedGet) {
    signedGet = new S3SignedGet(client);
    SIGNED_GETS.set(client, signedGet);
  }
  return signedGet;
}

interface Range {
  readonly start: number;
  readonly etag?: string;
}

interface RangeRead {
  readonly bytes: Buffer;
  /** The object's size, from Content-Range. */
  readonly total: number | undefined;
  readonly etag: string | undefined;
}

interface BuiltRequest {
  readonly protocol: string;
  readonly hostname: string;
  readonly port?: number;
  readonly path: string;
}

interface AuthScheme {
  readonly name: string;
  readonly signingName?: string;
  readonly signingRegion?: string;
}

const STOP = Symbol('endpoint resolved');
const SAMPLE_KEY = 'k';
/** SHA-256 of no bytes: a GET's payload hash, which S3 requires in `x-amz-content-sha256`. */
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** The SDK's encoding of a key in a path: each segment as encodeURIComponent, plus `!'()*`. */
function encodeKey(key: string): string {
  return key.split('/').map((segment) => encodeURIComponent(segment)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join('/');
}

function hostHeader(request: EndpointRequest & { readonly hostname: string }): string {
  return request.port ? `${request.hostname}:${request.port}` : request.hostname;
}

/**
 * The body in one buffer: sized from Content-Length and filled as chunks arrive (one copy), or the
 * chunk itself when the body came in one (none).
 */
function collectBody(response: http.IncomingMessage): Promise<{ bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const length = Number(response.headers['content-length']);
    const known = Number.isInteger(length) && length >= 0;
    let whole: Buffer | undefined;
    let first: Buffer | undefined;
    let chunks: Buffer[] | undefined;
    let received = 0;
    response.on('data', (chunk: Buffer) => {
      if (received === 0 && (!known || chunk.length === length)) {
        first = chunk;
      } else if (known) {
        if (!whole) {
          whole = Buffer.allocUnsafe(length);
          if (first) first.copy(whole, 0);
          first = undefined;
        }
        chunk.copy(whole, received);
      } else {
        chunks ??= [first!];
        chunks.push(chunk);
      }
      received += chunk.length;
    });
    response.on('end', () => {
      if (known && received !== length) {
        reject(Object.assign(new Error(`body ended after ${received} of ${length} bytes`), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
        return;
      }
      resolve({ bytes: whole ?? (chunks ? Buffer.concat(chunks) : first ?? Buffer.alloc(0)) });
    });
    response.on('aborted', () => reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })));
    response.on('error', reject);
  });
}

/** What the SDK throws for an S3 error answer: `name` and `Code` from the XML body, the status in `$metadata`. */
function httpError(status: number, body: Buffer, headers: http.IncomingHttpHeaders): Error {
  const text = body.toString('utf8', 0, Math.min(body.length, 4096));
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? (status === 404 ? 'NotFound' : status === 403 ? 'Forbidden' : undefined);
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? `HTTP ${status}`;
  const error = new Error(message) as Error & { Code?: string; $metadata: { httpStatusCode: number; requestId?: string } };
  error.name = code ?? 'UnknownError';
  if (code) error.Code = code;
  error.$metadata = { httpStatusCode: status, requestId: headers['x-amz-request-id'] as string | undefined };
  return error;
}
