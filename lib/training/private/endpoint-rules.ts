import * as fs from 'fs';
import * as path from 'path';
import type { TrainingCodeFiles } from '../training-code';
import { TrainingEndpoint } from '../training-network';

/** A synth-time warning: its id after `cdk-training-io:` and what to do. */
export interface EndpointWarning {
  readonly code: string;
  readonly message: string;
}

/** The endpoint of each boto3 service name: the enum's values are those names. */
const ENDPOINT_OF_SERVICE = new Map<string, TrainingEndpoint>(Object.values(TrainingEndpoint).map((e) => [e, e]));
/** Reached through the network's gateway endpoint. */
const GATEWAY_SERVICES = new Set(['s3']);
/** `boto3.client('sts')`, `session.resource("s3")`, `client(service_name='kms')`. */
const CLIENT_CALL = /\b(?:client|resource)\(\s*(?:service_name\s*=\s*)?['"]([a-z0-9-]+)['"]/g;
/** Larger files are data, not code: not read. */
const MAX_SOURCE_BYTES = 1024 * 1024;

/**
 * What the shipped training code is likely to reach for and an isolated network without these
 * endpoints cannot give it: AWS APIs its Python files create boto3 clients for, and PyPI when a
 * requirements.txt makes the toolkit run pip install. Either hangs until it times out. Only the
 * files the tarball ships are read: a `node_modules` beside the script is not code the job runs.
 */
export function missingEndpointWarnings(code: TrainingCodeFiles, endpoints: TrainingEndpoint[]): EndpointWarning[] {
  const warnings: EndpointWarning[] = [];
  const present = new Set(endpoints);
  const callers = new Map<string, string>();
  for (const file of pythonFiles(code)) {
    for (const match of fs.readFileSync(path.join(code.directory, file), 'utf8').matchAll(CLIENT_CALL)) {
      if (!callers.has(match[1])) callers.set(match[1], file);
    }
  }
  for (const [service, file] of callers) {
    if (GATEWAY_SERVICES.has(service)) continue;
    const endpoint = ENDPOINT_OF_SERVICE.get(service);
    if (endpoint && present.has(endpoint)) continue;
    warnings.push({
      code: 'missingVpcEndpoint',
      message: `the training code calls ${service} (${file}), which the job's isolated subnets cannot reach: the call hangs until it ` +
        'times out; ' + (endpoint
        ? `add the endpoint (interfaceEndpoints: [TrainingEndpoint.${enumMember(endpoint)}] or network.addInterfaceEndpoint)`
        : 'run the job in a vpc of your own with a route to it (NAT or its interface endpoint)'),
    });
  }
  if (code.files.includes('requirements.txt')) {
    warnings.push({
      code: 'packageInstallInIsolatedNetwork',
      message: 'the training code has a requirements.txt, which the toolkit installs with pip before training, but the job\'s ' +
        'isolated subnets cannot reach PyPI: the install hangs; bake the packages into the image, or run the job in a vpc of your ' +
        'own with a route to a package index',
    });
  }
  return warnings;
}

/** `STS` for TrainingEndpoint.STS: the member's name, as users write it. */
function enumMember(endpoint: TrainingEndpoint): string {
  return Object.entries(TrainingEndpoint).find(([, value]) => value === endpoint)![0];
}

/** The shipped Python files, small enough to be code rather than data. */
function pythonFiles(code: TrainingCodeFiles): string[] {
  return code.files.filter((file) => {
    const stats = fs.lstatSync(path.join(code.directory, file));
    return file.endsWith('.py') && stats.isFile() && stats.size <= MAX_SOURCE_BYTES;
  });
}
