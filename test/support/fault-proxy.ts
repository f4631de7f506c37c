import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A request as it reaches the proxy. */
export interface ProxiedRequest {
  readonly method: string;
  /** Path and query, e.g. `/bucket/key?partNumber=2&uploadId=…`. */
  readonly url: string;
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
  /** Requests answered with a fault so far (resets and SlowDowns). */
  readonly faults: number;
  /** Drops every fault still pending and every delay. */
  passThrough(): void;
  /** Resets (TCP RST, no answer) the connection of each of the next `count` requests. */
  resetNext(count: number): void;
  /** Answers each of the next `count` requests with 503 SlowDown (after any pending resets). */
  slowDownNext(count: number): void;
  /** Holds every request this long before forwarding it (0: none). */
  delay(ms: number): void;
  /** Called with each request before it is faulted or forwarded, e.g. to kill the server at a chosen moment. */
  onRequest(hook: ((request: ProxiedRequest) => void | Promise<void>) | undefined): void;
  /** Points the proxy at another port. */
  setTarget(port: number): void;
  close(): Promise<void>;
}

const SLOW_DOWN_BODY = '<?xml version="1.0" encoding="UTF-8"?>\n'
  + '<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message>'
  + '<RequestId>fault-proxy</RequestId><HostId>fault-proxy</HostId></Error>';

/** Starts a fault proxy on a free loopback port, forwarding to `targetPort` on 127.0.0.1. */
export async function startFaultProxy(targetPort: number): Promise<FaultProxy> {
  let target = targetPort;
  let pendingResets = 0;
  let pendingSlowDowns = 0;
  let delayMs = 0;
  let hook: ((request: ProxiedRequest) => void | Promise<void>) | undefined;
  let requests = 0;
  let faults = 0;
  const agent = new http.Agent({ keepAlive: true });

  const server = http.createServer((req, res) => {
    requests++;
    void (async () => {
      await hook?.({ method: req.method ?? 'GET', url: req.url ?? '/' });
      if (delayMs > 0) await sleep(delayMs);
      if (pendingResets > 0) {
        pendingResets--;
        faults++;
        req.socket.resetAndDestroy();
        return;
      }
      if (pendingSlowDowns > 0) {
        pendingSlowDowns--;
        faults++;
        // Read the body first, as S3 does, so that the client sees the answer rather than a broken pipe.
        req.resume();
        req.once('end', () => {
          res.writeHead(503, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(SLOW_DOWN_BODY) });
          res.end(SLOW_DOWN_BODY);
        });
        return;
      }
      const upstream = http.request({
        host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers, agent,
      }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
        answer.once('error', () => req.socket.resetAndDestroy());
      });
      // A backend that is down or dies mid-request: the client sees its connection reset.
      upstream.once('error', () => {
        if (!req.socket.destroyed) req.socket.resetAndDestroy();
      });
      req.pipe(upstream);
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
      pendingResets = 0;
      pendingSlowDowns = 0;
      delayMs = 0;
    },
    resetNext: (count) => {
      pendingResets += count;
    },
    slowDownNext: (count) => {
      pendingSlowDowns += count;
    },
    delay: (ms) => {
      delayMs = ms;
    },
    onRequest: (next) => {
      hook = next;
    },
    setTarget: (port) => {
      target = port;
    },
    close: async () => {
      server.closeAllConnections();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
