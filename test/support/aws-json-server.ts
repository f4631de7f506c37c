import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { SFNClient } from '@aws-sdk/client-sfn';
import type { ApiService } from './api-model';
import { ApiModel } from './api-model';
import { useTestCredentials } from './aws-environment';

/** An error the fake service answers with (JSON protocol: `__type` and `message`, HTTP 400 unless told). */
export class AwsServiceError extends Error {
  constructor(public readonly code: string, message: string, public readonly status = 400) {
    super(message);
  }
}

/** Answers one operation: the request's JSON in, the response's JSON out (or an AwsServiceError thrown). */
export type OperationHandler = (input: any) => unknown;

/** One request the server answered. */
export interface AwsCall {
  readonly service: ApiService;
  readonly operation: string;
  readonly input: any;
}

/**
 * AWS services speaking the JSON protocol (SageMaker and EventBridge 1.1, CloudWatch and Step
 * Functions 1.0) on 127.0.0.1, for code under test that uses the real SDK v3 clients. Every request
 * and every response is checked against the service's official API model: a request the real
 * service would refuse, or a response a test wrote wrongly, is recorded in `violations` (and
 * answered with HTTP 500).
 */
export interface AwsJsonServer {
  readonly endpoint: string;
  readonly calls: AwsCall[];
  readonly violations: string[];
  /** Sets the answer of an operation. */
  on(service: ApiService, operation: string, handler: OperationHandler): void;
  /** Forgets the handlers, calls and violations. */
  reset(): void;
  close(): Promise<void>;
}

export async function startAwsJsonServer(services: ApiService[]): Promise<AwsJsonServer> {
  const models = new Map(services.map((service) => {
    const model = ApiModel.load(service);
    return [model.targetPrefix!, model] as const;
  }));
  const handlers = new Map<string, OperationHandler>();
  const calls: AwsCall[] = [];
  const violations: string[] = [];

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const [prefix, operation] = String(request.headers['x-amz-target'] ?? '').split('.');
      const model = models.get(prefix);
      const answer = (status: number, body: unknown, errorType?: string) => {
        response.writeHead(status, {
          'content-type': `application/x-amz-json-${model?.jsonVersion ?? '1.1'}`,
          'x-amzn-requestid': `req-${calls.length}`,
          ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
        });
        response.end(JSON.stringify(body));
      };
      if (!model) {
        violations.push(`request with X-Amz-Target '${request.headers['x-amz-target']}' for no service this server speaks`);
        return answer(400, { __type: 'UnknownOperationException', message: 'unknown target' }, 'UnknownOperationException');
      }
      void (async () => {
        const input = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
        const shapes = model.operation(operation);
        calls.push({ service: model.service, operation, input });
        for (const v of shapes.input ? model.validate(shapes.input, input) : []) {
          violations.push(`${model.service} ${operation} request: ${v.path}: ${v.message}`);
        }
        const handler = handlers.get(`${model.service}.${operation}`);
        if (!handler) {
          violations.push(`${model.service} ${operation}: no answer set by the test`);
          return answer(500, { __type: 'InternalFailure', message: `no handler for ${operation}` }, 'InternalFailure');
        }
        let output: unknown;
        try {
          output = await handler(input);
        } catch (error) {
          if (error instanceof AwsServiceError) return answer(error.status, { __type: error.code, message: error.message }, error.code);
          throw error;
        }
        const broken = shapes.output ? model.validate(shapes.output, output) : [];
        for (const v of broken) violations.push(`${model.service} ${operation} response: ${v.path}: ${v.message}`);
        return broken.length ? answer(500, { __type: 'InternalFailure', message: 'invalid test response' }, 'InternalFailure') : answer(200, output);
      })().catch((error: Error) => {
        violations.push(`${model.service} ${operation}: ${error.message}`);
        answer(500, { __type: 'InternalFailure', message: error.message }, 'InternalFailure');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    violations,
    on: (service, operation, handler) => {
      ApiModel.load(service).operation(operation);
      handlers.set(`${service}.${operation}`, handler);
    },
    reset: () => {
      handlers.clear();
      calls.length = 0;
      violations.length = 0;
    },
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

const TEST_CLIENT_CONFIG = {
  region: 'us-east-1',
  credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' },
  maxAttempts: 1,
};

/** SDK clients of the services the server speaks, pointed at it. */
export function awsTestClients(server: Pick<AwsJsonServer, 'endpoint'>) {
  const config = { ...TEST_CLIENT_CONFIG, endpoint: server.endpoint };
  return {
    sagemaker: new SageMakerClient(config),
    cloudwatch: new CloudWatchClient(config),
    events: new EventBridgeClient(config),
    sfn: new SFNClient(config),
  };
}

/**
 * A suite's server: started with test credentials in the environment before all tests, checked
 * after each test that every request and answer matched the models (then reset), stopped after all.
 * `started` receives the server for the tests to use.
 */
export function useAwsJsonServer(services: ApiService[], started: (server: AwsJsonServer) => void): void {
  let server: AwsJsonServer | undefined;
  let restoreEnvironment: (() => void) | undefined;
  beforeAll(async () => {
    server = await startAwsJsonServer(services);
    started(server);
    restoreEnvironment = useTestCredentials();
  });
  afterAll(async () => {
    restoreEnvironment?.();
    await server?.close();
  });
  afterEach(() => {
    expect(server!.violations).toEqual([]);
    server!.reset();
  });
}
