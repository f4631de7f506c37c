import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import type { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';

/** The control id in a Control Tower rule's message, e.g. `[CT.S3.PR.9]: Require that ...` → `ct-s3-pr-9`. */
const CONTROL_ID = /\[CT\.([A-Z0-9]+)\.PR\.(\d+)\]/;

/** The Control Tower rules `@cdklabs/cdk-validator-cfnguard` ships: one `.guard` file per control. */
export const CONTROL_RULES_DIRECTORY = path.join(path.dirname(require.resolve('@cdklabs/cdk-validator-cfnguard/package.json')), 'rules', 'control-tower', 'cfn-guard');

/** A CloudFormation resource type as the rules name it: `AWS::S3::Bucket`. */
const RESOURCE_TYPE = /AWS::[A-Za-z0-9]+::[A-Za-z0-9]+/g;

/** Every rule file, with the resource types it names. */
function controlRules(): Array<{ readonly file: string; readonly types: ReadonlySet<string> }> {
  return fs.readdirSync(CONTROL_RULES_DIRECTORY, { recursive: true, encoding: 'utf8' })
    .map((name) => path.join(CONTROL_RULES_DIRECTORY, name))
    .filter((file) => file.endsWith('.guard'))
    .sort()
    .map((file) => ({ file, types: new Set(fs.readFileSync(file, 'utf8').match(RESOURCE_TYPE) ?? []) }));
}

/**
 * The rule files that can fail `template`: those naming one of its resource types. Each rule selects
 * its resources by type (`Resources.*[ Type == 'AWS::...' ]`) and is skipped when there are none, so
 * the others pass it (`test/app/control-tower.test.ts` checks that of the full set on a template of
 * no type any rule names); running them anyway costs cfn-guard a walk of every resource each, about
 * three quarters of its CPU on a reference stack (237 rules, 48 of them naming its types).
 */
export function rulesThatCanFail(template: { Resources?: Record<string, { Type: string }> }, rules = controlRules()): string[] {
  const types = new Set(Object.values(template.Resources ?? {}).map((resource) => resource.Type));
  return rules.filter((rule) => [...rule.types].some((type) => types.has(type))).map((rule) => rule.file);
}

/**
 * The AWS Control Tower proactive controls a stack's template fails, as `control id → logical ids of
 * the resources that fail it`, sorted: what a CloudFormation hook of a governed account would block.
 * Runs the cfn-guard rules and binary that `@cdklabs/cdk-validator-cfnguard` ships (offline): the
 * rules that can fail the template.
 */
export function controlTowerFailures(stack: Stack): Record<string, string[]> {
  const template = Template.fromStack(stack).toJSON();
  return guardFailures(stack, template, rulesThatCanFail(template));
}

/** The controls `template` (the stack's, or one of a test's own) fails by the rule files or folders `rules`, as controlTowerFailures says them. */
export function guardFailures(stack: Stack, template: object, rules: string[]): Record<string, string[]> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'control-tower-'));
  try {
    const templatePath = path.join(directory, 'template.json');
    fs.writeFileSync(templatePath, JSON.stringify(template));
    // The report of a stack with tens of resources runs to megabytes: above Node's 1 MiB default.
    // The plugin's own Control Tower rules off: those that can fail the template are passed as rules of the user's.
    const validator = new CfnGuardValidator({ maxBuffer: 256 * 1024 * 1024, controlTowerRulesEnabled: false, rules });
    const report = validator.validate({ templatePaths: [templatePath], appConstruct: stack.node.root });
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
