import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import type { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';

/** The control id in a Control Tower rule's message, e.g. `[CT.S3.PR.9]: Require that ...` → `ct-s3-pr-9`. */
const CONTROL_ID = /\[CT\.([A-Z0-9]+)\.PR\.(\d+)\]/;

/**
 * The AWS Control Tower proactive controls a stack's template fails, as `control id → logical ids of
 * the resources that fail it`, sorted: what a CloudFormation hook of a governed account would block.
 * Runs the cfn-guard rules and binary that `@cdklabs/cdk-validator-cfnguard` ships (offline).
 */
export function controlTowerFailures(stack: Stack): Record<string, string[]> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'control-tower-'));
  try {
    const templatePath = path.join(directory, 'template.json');
    fs.writeFileSync(templatePath, JSON.stringify(Template.fromStack(stack).toJSON()));
    // The report of a stack with tens of resources runs to megabytes: above Node's 1 MiB default.
    const report = new CfnGuardValidator({ maxBuffer: 256 * 1024 * 1024 }).validate({ templatePaths: [templatePath], appConstruct: stack.node.root });
    const failures: Record<string, Set<string>> = {};
    for (const violation of report.violations) {
      const control = controlId(violation.description) ?? violation.ruleName;
      const resources = failures[control] ??= new Set();
      violation.violatingResources.forEach((r) => resources.add(r.resourceLogicalId));
    }
    return Object.fromEntries(Object.keys(failures).sort(compareControls).map((c) => [c, [...failures[c]].sort()]));
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

/** `ct-s3-pr-9` from a rule's message, undefined when the message names no control. */
function controlId(description: string): string | undefined {
  const match = CONTROL_ID.exec(description);
  return match ? `ct-${match[1].toLowerCase()}-pr-${match[2]}` : undefined;
}

/** Orders control ids by service, then by number (`ct-s3-pr-2` before `ct-s3-pr-10`). */
function compareControls(a: string, b: string): number {
  const [serviceA, numberA] = [a.replace(/-\d+$/, ''), Number(/(\d+)$/.exec(a)?.[1])];
  const [serviceB, numberB] = [b.replace(/-\d+$/, ''), Number(/(\d+)$/.exec(b)?.[1])];
  return serviceA === serviceB ? numberA - numberB : serviceA.localeCompare(serviceB);
}
