import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { stopAfterAll } from './left-running';

/** A request as it reaches the proxy. */
export interface ProxiedRequest {
  readonly method: string;
  /** Path and query, e.g. `/bucket/key?partNumber=2&uploadId=…`. */
  readonly url: string;
  /** Its headers, names in lower case (`range`, `authorization`…). */
  readonly headers: http.IncomingHttpHeaders;
}

/**
 * An HTTP proxy on 127.0.0.1 between an S3 client and the test server, injecting the faults a real
 * S3 shows: connection resets, 503 SlowDown, latency. To kill or restart the server behind it, use
 * the server's own `kill()` / `restart()` (same port): while it is down, the proxy resets the
 * client's connection, as a dead backend behind a load balancer would.
 */
export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: give it to `s3TestClient(server, { endpoint })`. */
  readonly endpoint: string;
  /** Requests received so far, faulted ones included. */
  readonly requests: number;
  /** Requests answered with a fault so far (resets, SlowDowns, denials, and requests left unanswered). */
  readonly faults: number;
  /** Drops every fault still pending and every delay. */
  passThrough(): void;
  /** Resets (TCP RST, no answer) the connection of each of the next `count` requests. */
  resetNext(count: number): void;
  /** Answers each of the next `count` requests with 503 SlowDown (after any pending resets). */
  slowDownNext(count: number): void;
  /** Answers each of the next `count` requests with 403 AccessDenied, as S3 does when a policy denies the object (after any pending SlowDowns). */
  denyNext(count: number): void;
  /** Holds every request this long before forwarding it (0: none). */
  delay(ms: number): void;
  /**
   * From now on, accepts every connection and reads every request but never answers, as a server
   * that hangs does (until `passThrough()` or `close()`, which reset the connections held).
   */
  neverAnswer(): void;
  /**
   * Cuts the answer of each request `rule` picks: the server's headers and the first half of its body
   * reach the client, then the connection closes (an incomplete read, as a network blip makes);
   * `undefined` cuts nothing. Counted in `faults`.
   */
  cutAnswers(rule: ((request: ProxiedRequest) => boolean) | undefined): void;
  /**
   * The next `count` requests that `match` accepts reach the server, which acts on them; their answers
   * are dropped and the client's connection reset, as an answer lost on the way back (the client's
   * retry then finds what the first request did: a conditional PUT gets 412).
   */
  loseAnswerOf(match: (request: ProxiedRequest) => boolean, count?: number): void;
  /**
   * A writer stopped with its request in flight (a Lambda attempt ended by its timeout): the next
   * request that `match` accepts is held, unanswered, until `land()`, which sends it on to the server
   * (it lands: the object appears) and resets the client's connection; from then on the same method
   * on the same key is refused with 403 AccessDenied, so nothing the writer retries reaches the store.
   */
  holdInFlight(match: (request: ProxiedRequest) => boolean): InFlightWrite;
  /**
   * The store's clock jumps forward by `ms`: objects written through the proxy from now on carry a
   * Last-Modified that much later (all the jumps so far) in HEAD and GET answers, as if they had
   * been written that much later. What a test uses to age a store by minutes without waiting.
   */
  advanceClock(ms: number): void;
  /** Called with each request before it is faulted or forwarded, e.g. to kill the server at a chosen moment. */
  onRequest(hook: ((request: ProxiedRequest) => void | Promise<void>) | undefined): void;
  /** Points the proxy at another port. */
  setTarget(port: number): void;
  close(): Promise<void>;
}

/** The request `holdInFlight` waits for, and once it came, how to land it. */
interface HeldWrite {
  readonly match: (request: ProxiedRequest) => boolean;
  readonly reached: (request: ProxiedRequest) => void;
  request?: ProxiedRequest;
  landing?: Promise<() => Promise<void>>;
}

/** A request held by `holdInFlight`. */
export interface InFlightWrite {
  /** Resolves with the request once it reached the proxy and is held. */
  readonly reached: Promise<ProxiedRequest>;
  /** Sends the held request on; resolves once the server has answered it (the answer is dropped). */
  land(): Promise<void>;
}

const SLOW_DOWN_BODY = errorBody('SlowDown', 'Please reduce your request rate.');
const ACCESS_DENIED_BODY = errorBody('AccessDenied', 'Access Denied');

function errorBody(code: string, message: string): string {
  return '<?xml version="1.0" encoding="UTF-8"?>\n'
    + `<Error><Code>${code}</Code><Message>${message}</Message><RequestId>fault-proxy</RequestId><HostId>fault-proxy</HostId></Error>`;
}

/** Starts a fault proxy on a free loopback port, forwarding to `targetPort` on 127.0.0.1. */
export function startFaultProxy(targetPort: number): Promise<FaultProxy> {
  // Closed after the test file's tests, also where the hook that started it timed out (./left-running.ts).
  const start = startProxy(targetPort);
  void stopAfterAll(start.then((proxy) => ({ stop: () => proxy.close() })));
  return start;
}

async function startProxy(targetPort: number): Promise<FaultProxy> {
  let target = targetPort;
  let pendingResets = 0;
  let pendingSlowDowns = 0;
  let pendingDenials = 0;
  let delayMs = 0;
  let silent = false;
  /** Ends the requests being held, so that no timer outlives passThrough() or close() (jest waits for them). */
  let holding = new AbortController();
  const releaseHeld = () => {
    holding.abort();
    holding = new AbortController();
  };
  let hook: ((request: ProxiedRequest) => void | Promise<void>) | undefined;
  let requests = 0;
  let faults = 0;
  const agent = new http.Agent({ keepAlive: true });
  let lostAnswers: { readonly match: (request: ProxiedRequest) => boolean; count: number } | undefined;
  let inFlight: HeldWrite | undefined;
  let cutRule: ((request: ProxiedRequest) => boolean) | undefined;
  /** `<method> <path>` of the writes of stopped writers (holdInFlight): refused from then on. */
  const refused = new Set<string>();
  const clock = new StoreClock();
  const forward = (req: http.IncomingMessage, onAnswer: (answer: http.IncomingMessage) => void) => {
    clock.noteWrite(req);
    const upstream = http.request({ host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers, agent }, onAnswer);
    // A backend that is down or dies mid-request: the client sees its connection reset.
    upstream.once('error', () => {
      if (!req.socket.destroyed) req.socket.resetAndDestroy();
    });
    return upstream;
  };

  const server = http.createServer((req, res) => {
    requests++;
    void (async () => {
      const request: ProxiedRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers };
      await hook?.(request);
      if (refused.has(writeOf(request))) {
        faults++;
        answerWith(req, res, 403, ACCESS_DENIED_BODY);
        return;
      }
      if (inFlight && !inFlight.landing && inFlight.match(request)) {
        faults++;
        inFlight.request = request;
        inFlight.landing = holdUntilLanded(req, forward);
        inFlight.reached(request);
        return;
      }
      // A held request released early is reset, as an answer that never came.
      if (delayMs > 0) await sleep(delayMs, undefined, { signal: holding.signal });
      if (silent) {
        faults++;
        req.resume();
        holding.signal.addEventListener('abort', () => req.socket.resetAndDestroy(), { once: true });
        return;
      }
      if (pendingResets > 0) {
        pendingResets--;
        faults++;
        req.socket.resetAndDestroy();
        return;
      }
      const answer = pendingSlowDowns > 0 ? { status: 503, body: SLOW_DOWN_BODY } : pendingDenials > 0 ? { status: 403, body: ACCESS_DENIED_BODY } : undefined;
      if (answer) {
        if (answer.status === 503) pendingSlowDowns--;
        else pendingDenials--;
        faults++;
        answerWith(req, res, answer.status, answer.body);
        return;
      }
      const loseAnswer = lostAnswers !== undefined && lostAnswers.count > 0 && lostAnswers.match(request);
      if (loseAnswer) {
        lostAnswers!.count--;
        faults++;
      }
      const cut = cutRule?.(request) ?? false;
      req.pipe(forward(req, (answer) => {
        if (loseAnswer) {
          answer.resume();
          answer.once('end', () => req.socket.resetAndDestroy());
          return;
        }
        res.writeHead(answer.statusCode ?? 502, clock.shiftLastModified(request, answer.rawHeaders));
        if (cut) {
          faults++;
          cutHalfway(answer, res, req);
          return;
        }
        answer.pipe(res);
        answer.once('error', () => req.socket.resetAndDestroy());
      }));
    })().catch(() => req.socket.resetAndDestroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    get faults() {
      return faults;
    },
    passThrough: () => {
      releaseHeld();
      pendingResets = 0;
      pendingSlowDowns = 0;
      pendingDenials = 0;
      delayMs = 0;
      silent = false;
      cutRule = undefined;
    },
    resetNext: (count) => {
      pendingResets += count;
    },
    slowDownNext: (count) => {
      pendingSlowDowns += count;
    },
    denyNext: (count) => {
      pendingDenials += count;
    },
    delay: (ms) => {
      delayMs = ms;
    },
    neverAnswer: () => {
      silent = true;
    },
    cutAnswers: (rule) => {
      cutRule = rule;
    },
    loseAnswerOf: (match, count = 1) => {
      lostAnswers = { match, count };
    },
    holdInFlight: (match) => {
      let reached!: (request: ProxiedRequest) => void;
      const reachedProxy = new Promise<ProxiedRequest>((resolve) => {
        reached = resolve;
      });
      const held: HeldWrite = { match, reached: (request) => reached(request) };
      inFlight = held;
      return {
        reached: reachedProxy,
        land: async () => {
          if (!held.landing || !held.request) throw new Error('holdInFlight: no request is held yet (await reached first)');
          refused.add(writeOf(held.request));
          await (await held.landing)();
        },
      };
    },
    advanceClock: (ms) => clock.advance(ms),
    onRequest: (next) => {
      hook = next;
    },
    setTarget: (port) => {
      target = port;
    },
    close: async () => {
      releaseHeld();
      server.closeAllConnections();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Sends the first half of the answer's body (by its Content-Length), then closes the connection once those bytes are out. */
function cutHalfway(answer: http.IncomingMessage, res: http.ServerResponse, req: http.IncomingMessage): void {
  let left = Math.floor(Number(answer.headers['content-length'] ?? 0) / 2);
  const close = () => {
    answer.destroy();
    req.socket.destroy();
  };
  if (left === 0) {
    res.flushHeaders();
    setImmediate(close);
    return;
  }
  answer.on('data', (chunk: Buffer) => {
    if (left <= 0) return;
    const part = chunk.subarray(0, left);
    left -= part.length;
    if (left === 0) res.write(part, close);
    else res.write(part);
  });
}

/** Answers a request with an S3 error, after reading its body as S3 does, so that the client sees the answer rather than a broken pipe. */
function answerWith(req: http.IncomingMessage, res: http.ServerResponse, status: number, body: string): void {
  req.resume();
  req.once('end', () => {
    res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}

/** Reads a held request's body; the function returned sends it on, waits for the server's answer, drops it and resets the client. */
async function holdUntilLanded(req: http.IncomingMessage,
  forward: (req: http.IncomingMessage, onAnswer: (answer: http.IncomingMessage) => void) => http.ClientRequest): Promise<() => Promise<void>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return () => new Promise<void>((resolve, reject) => {
    const upstream = forward(req, (answer) => {
      answer.resume();
      answer.once('end', () => {
        req.socket.resetAndDestroy();
        resolve();
      });
    });
    upstream.once('error', reject);
    upstream.end(Buffer.concat(chunks));
  });
}

/** `<method> <path>`: a write to one key, whatever its query. */
function writeOf(request: ProxiedRequest): string {
  return `${request.method} ${request.url.split('?', 1)[0]}`;
}

/** The store's clock as the proxy shows it: objects written after `advance()` carry a later Last-Modified. */
class StoreClock {
  private offsetMs = 0;
  /** Path → how far the clock had jumped when the object there was last written. */
  private readonly offsets = new Map<string, number>();

  public advance(ms: number): void {
    this.offsetMs += ms;
  }

  /** Notes a request that writes an object (a PutObject, a copy, a multipart upload's completion; not its parts). */
  public noteWrite(req: http.IncomingMessage): void {
    const [path, query = ''] = (req.url ?? '/').split('?', 2);
    const writes = (req.method === 'PUT' && !/(^|&)partNumber=/.test(query)) || (req.method === 'POST' && /(^|&)uploadId=/.test(query));
    if (!writes) return;
    if (this.offsetMs === 0) this.offsets.delete(path);
    else this.offsets.set(path, this.offsetMs);
  }

  /** An answer's headers, its Last-Modified moved by the jump its object was written after. */
  public shiftLastModified(request: ProxiedRequest, rawHeaders: string[]): string[] {
    const offset = this.offsets.get(request.url.split('?', 1)[0]);
    if (!offset) return rawHeaders;
    return rawHeaders.map((value, i) => (i % 2 === 1 && rawHeaders[i - 1].toLowerCase() === 'last-modified'
      ? new Date(Date.parse(value) + offset).toUTCString() : value));
  }
}
