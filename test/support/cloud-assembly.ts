import * as fs from 'fs';
import * as path from 'path';
import { CloudFormationValidatePlugin } from 'aws-cdk-lib';
import type { ApiViolation } from './api-model';
import { ApiModel } from './api-model';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const aslValidator = require('asl-validator') as (definition: unknown) => { isValid: boolean; errors: unknown[] };

/** One CloudFormation template of a synthesized cloud assembly (a `cdk.out` directory). */
export interface SynthesizedStack {
  readonly stackName: string;
  readonly template: CfnTemplate;
}

/** The parts of a template these checks read. */
export interface CfnTemplate {
  readonly Resources: Record<string, { readonly Type: string; readonly Properties?: Record<string, any> }>;
}

/** A problem found in a cloud assembly: what and where. */
export type AssemblyProblem = string;

/** What a stack's state machines and FSx resources send to the AWS APIs, checked against the official API models. */
const RESOURCE_REQUESTS: ReadonlyArray<{ readonly type: string; readonly service: 'fsx'; readonly shape: string }> = [
  { type: 'AWS::FSx::FileSystem', service: 'fsx', shape: 'CreateFileSystemRequest' },
  { type: 'AWS::FSx::DataRepositoryAssociation', service: 'fsx', shape: 'CreateDataRepositoryAssociationRequest' },
];

/** The `Resource` of a Step Functions task that creates a SageMaker training job (any integration pattern). */
const CREATE_TRAINING_JOB = /:states:::sagemaker:createTrainingJob(\.sync)?$/;

/** The CloudFormation stacks of the cloud assembly in `outdir`, from its manifest. */
export function synthesizedStacks(outdir: string): SynthesizedStack[] {
  const manifest = readJson(path.join(outdir, 'manifest.json'));
  return Object.entries<any>(manifest.artifacts ?? {})
    .filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack')
    .map(([stackName, artifact]) => ({
      stackName,
      template: readJson(path.join(outdir, artifact.properties.templateFile)) as CfnTemplate,
    }));
}

/**
 * Every asset the assembly's asset manifests name whose source is missing from `outdir`, empty, or
 * (for a Docker image) has no Dockerfile: what `cdk deploy` would fail to publish.
 */
export function assetProblems(outdir: string): AssemblyProblem[] {
  const problems: AssemblyProblem[] = [];
  const manifests = fs.readdirSync(outdir).filter((file) => file.endsWith('.assets.json'));
  if (manifests.length === 0) problems.push(`no asset manifest in ${outdir}`);
  for (const file of manifests) {
    const assets = readJson(path.join(outdir, file));
    for (const [hash, asset] of Object.entries<any>(assets.files ?? {})) {
      const source = path.join(outdir, asset.source.path);
      if (!fs.existsSync(source)) {
        problems.push(`${file}: file asset ${asset.displayName ?? hash} has no ${asset.source.path}`);
      } else if (fs.statSync(source).isDirectory() ? fs.readdirSync(source).length === 0 : fs.statSync(source).size === 0) {
        problems.push(`${file}: file asset ${asset.displayName ?? hash} is empty (${asset.source.path})`);
      }
    }
    for (const [hash, asset] of Object.entries<any>(assets.dockerImages ?? {})) {
      const dockerfile = path.join(outdir, asset.source.directory, asset.source.dockerFile ?? 'Dockerfile');
      if (!fs.existsSync(dockerfile)) {
        problems.push(`${file}: image asset ${asset.displayName ?? hash} has no ${path.relative(outdir, dockerfile)}`);
      }
    }
  }
  return problems;
}

/**
 * What the stack would send to the AWS APIs and is not a CloudFormation resource schema's business:
 * every CreateTrainingJob request of every state machine (SageMaker model), every FSx file system and
 * data repository association (FSx model), and every state machine definition (Amazon States
 * Language validator). CloudFormation intrinsics count as present and are not checked.
 */
export function apiModelProblems(stack: SynthesizedStack): AssemblyProblem[] {
  const problems: AssemblyProblem[] = [];
  const describe = (where: string, violations: ApiViolation[]) =>
    violations.forEach((v) => problems.push(`${stack.stackName} ${where}: ${v.path} ${v.message}`));
  for (const [logicalId, resource] of Object.entries(stack.template.Resources)) {
    for (const request of RESOURCE_REQUESTS.filter((r) => r.type === resource.Type)) {
      describe(logicalId, ApiModel.load(request.service).validate(request.shape, resource.Properties ?? {}));
    }
    if (resource.Type !== 'AWS::StepFunctions::StateMachine') continue;
    const definition = resource.Properties?.DefinitionString;
    const asl = aslValidator(renderDefinition(definition, placeholderFor));
    if (!asl.isValid) problems.push(`${stack.stackName} ${logicalId}: not valid Amazon States Language: ${JSON.stringify(asl.errors)}`);
    for (const [state, parameters] of trainingJobRequests(definition)) {
      describe(`${logicalId} state ${state}`, ApiModel.load('sagemaker').validate('CreateTrainingJobRequest', parameters));
    }
  }
  return problems;
}

/** The CreateTrainingJob requests (task `Parameters`) of a state machine definition, by state name. */
export function trainingJobRequests(definitionString: unknown): Array<[string, Record<string, unknown>]> {
  const requests: Array<[string, Record<string, unknown>]> = [];
  const visit = (states: Record<string, any>) => {
    for (const [name, state] of Object.entries(states ?? {})) {
      if (state.Type === 'Task' && CREATE_TRAINING_JOB.test(flatten(state.Resource))) {
        requests.push([name, state.Parameters]);
      }
      for (const branch of state.Branches ?? []) visit(branch.States);
      visit((state.ItemProcessor ?? state.Iterator)?.States);
    }
  };
  visit(renderDefinition(definitionString, (intrinsic) => intrinsic).States);
  return requests;
}

/** A value as text, with the intrinsics of an `Fn::Join` left out (`arn:<partition>:states:::...` → `arn::states:::...`). */
function flatten(value: unknown): string {
  if (typeof value === 'string') return value;
  const join = (value as any)?.['Fn::Join'];
  return Array.isArray(join?.[1]) ? join[1].map(flatten).join(join[0]) : '';
}

/** Stands in for a deploy-time value where the ASL validator needs a string: a pseudo parameter's value, or an ARN. */
function placeholderFor(intrinsic: unknown): string {
  const pseudo: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::Region': 'us-east-1', 'AWS::AccountId': '111111111111', 'AWS::URLSuffix': 'amazonaws.com' };
  return pseudo[(intrinsic as any)?.Ref] ?? 'arn:aws:lambda:us-east-1:111111111111:function:placeholder';
}

/**
 * Parses a rendered `DefinitionString` (a string, or an `Fn::Join` of strings and intrinsics). A JSON
 * string value that is exactly one intrinsic becomes `replace(intrinsic)`; one that mixes text and
 * intrinsics becomes an `Fn::Join` of its parts (or `replace`'s strings joined, when `replace` returns
 * strings), so the value keeps its shape for the checks that come after.
 */
export function renderDefinition(definitionString: unknown, replace: (intrinsic: unknown) => unknown): any {
  if (typeof definitionString === 'string') return JSON.parse(definitionString);
  const parts = (definitionString as any)?.['Fn::Join']?.[1] as unknown[] | undefined;
  if ((definitionString as any)?.['Fn::Join']?.[0] !== '' || !Array.isArray(parts)) {
    throw new Error(`unexpected DefinitionString: ${JSON.stringify(definitionString).slice(0, 200)}`);
  }
  const intrinsics: unknown[] = [];
  const text = parts.map((part) => {
    if (typeof part === 'string') return part;
    intrinsics.push(part);
    return `\u0000${intrinsics.length - 1}\u0000`;
  }).join('');
  // eslint-disable-next-line no-control-regex -- NUL delimits the placeholders: it cannot occur in a template's strings
  const marker = /\u0000(\d+)\u0000/g;
  // eslint-disable-next-line no-control-regex -- the same NUL delimiters
  return JSON.parse(text.replace(/\u0000/g, '\\u0000'), (_key, value) => {
    if (typeof value !== 'string' || !value.includes('\u0000')) return value;
    const pieces = value.split(marker).map((piece, i) => (i % 2 === 1 ? replace(intrinsics[Number(piece)]) : piece)).filter((p) => p !== '');
    if (pieces.length === 1) return pieces[0];
    return pieces.every((p) => typeof p === 'string') ? pieces.join('') : { 'Fn::Join': ['', pieces] };
  });
}

/**
 * The policy validation report aws-cdk-lib writes when a validation plugin (cdk-nag's
 * `AwsSolutionsChecks`) ran at synth, as one line per violation; undefined when no plugin ran.
 */
export function validationViolations(outdir: string): string[] | undefined {
  const file = path.join(outdir, 'validation-report.json');
  if (!fs.existsSync(file)) return undefined;
  const report = readJson(file);
  return (report.pluginReports ?? []).flatMap((plugin: any) => (plugin.violations ?? []).map((v: any) =>
    `${plugin.pluginName}: ${v.ruleName} at ${(v.violatingConstructs ?? []).map((c: any) => c.constructPath).join(', ')}`));
}

/**
 * What aws-cdk-lib's built-in CloudFormation validation (the resource schemas and its default rules)
 * found in the templates of the cloud assembly in `outdir`, at any severity, as one line per finding:
 * `rule severity at Template/LogicalId.Property: description`. aws-cdk-lib reports its findings as
 * warnings and synthesizes anyway unless `@aws-cdk/core:validateAgainstDefaultRules` is set, so a
 * test reads them here. A clean run leaves no plugin report, only the file: without the file no
 * validation ran at all (CDK_VALIDATION=false), which is an error here, not a clean result.
 */
export function cfnValidationFindings(outdir: string): string[] {
  const file = path.join(outdir, 'validation-report.json');
  if (!fs.existsSync(file)) {
    throw new Error(`no ${file}: aws-cdk-lib's CloudFormation validation did not run (CDK_VALIDATION=${process.env.CDK_VALIDATION})`);
  }
  return (readJson(file).pluginReports ?? [])
    .filter((plugin: any) => plugin.pluginName === CloudFormationValidatePlugin.PLUGIN_NAME)
    .flatMap((plugin: any) => (plugin.violations ?? []).flatMap((v: any) => (v.violatingConstructs ?? []).map((c: any) => {
      const resource = c.cloudFormationResource;
      const where = resource ? `${resource.templatePath}/${resource.logicalId}${(resource.propertyPaths ?? []).map((p: string) => ` ${p}`).join('')}` : c.constructPath;
      return `${v.ruleName} ${v.severity} at ${where}: ${v.description}`;
    })));
}

/** The warnings and errors construct annotations left in the assembly's manifest, as `path: message`. */
export function annotations(outdir: string): string[] {
  const manifest = readJson(path.join(outdir, 'manifest.json'));
  return Object.values<any>(manifest.artifacts ?? {}).flatMap((artifact) => Object.entries<any[]>(artifact.metadata ?? {})
    .flatMap(([constructPath, entries]) => entries
      .filter((entry) => entry.type === 'aws:cdk:warning' || entry.type === 'aws:cdk:error')
      .map((entry) => `${constructPath}: ${typeof entry.data === 'string' ? entry.data : JSON.stringify(entry.data)}`)));
}

function readJson(file: string): any {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}
