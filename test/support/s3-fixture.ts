import type { S3Client } from '@aws-sdk/client-s3';
import type { FaultProxy} from './fault-proxy';
import { startFaultProxy } from './fault-proxy';
import { stopAfterAll } from './left-running';
import type { S3TestServer} from './s3-server';
import { s3TestClient, startS3Server } from './s3-server';

/** The local S3 server, a fault proxy in front of it, and a client for each path. */
export interface S3Fixture {
  readonly server: S3TestServer;
  /** Talks to the server directly: set-up and checks. */
  readonly client: S3Client;
  readonly proxy: FaultProxy;
  /** Talks through the proxy: the code under test, so faults can be injected. */
  readonly proxied: S3Client;
  /** Clears the faults a test set up. */
  reset(): void;
  stop(): Promise<void>;
}

/**
 * Starts the server and the proxy; call `reset` after each test and `stop` after all (stopped after
 * the file's tests anyway, also where the hook that started them timed out: ./left-running.ts).
 */
export function startS3Fixture(): Promise<S3Fixture> {
  return stopAfterAll(startFixture());
}

async function startFixture(): Promise<S3Fixture> {
  const server = await startS3Server();
  const client = s3TestClient(server);
  const proxy = await startFaultProxy(server.port);
  const proxied = s3TestClient(server, { endpoint: proxy.endpoint });
  return {
    server, client, proxy, proxied,
    reset: () => {
      proxy.passThrough();
      proxy.onRequest(undefined);
    },
    stop: async () => {
      client.destroy();
      proxied.destroy();
      await proxy.close();
      await server.stop();
    },
  };
}
