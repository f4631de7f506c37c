/**
 * What a ```ts fragment block of the docs may use without defining it: the names a docs example
 * takes for granted (a stack, a bucket, a VPC, a job of an earlier example). A fragment is
 * type-checked after a prelude that imports the library's and aws-cdk-lib's names it uses and
 * declares these variables, each only where the block uses it and does not define it itself.
 */

/** Module-scope names of aws-cdk-lib the examples use unqualified. */
const CDK_NAMES = ['App', 'Duration', 'RemovalPolicy', 'Size', 'Stack'];

/** aws-cdk-lib's modules, by the alias the examples give them. */
const CDK_MODULES: Record<string, string> = {
  ec2: 'aws-cdk-lib/aws-ec2',
  events: 'aws-cdk-lib/aws-events',
  fsx: 'aws-cdk-lib/aws-fsx',
  iam: 'aws-cdk-lib/aws-iam',
  kms: 'aws-cdk-lib/aws-kms',
  s3: 'aws-cdk-lib/aws-s3',
  sfn: 'aws-cdk-lib/aws-stepfunctions',
  sns: 'aws-cdk-lib/aws-sns',
};

/** The variables the examples take for granted, and their types. */
const VARIABLES: Record<string, string> = {
  stack: 'Stack',
  bucket: 's3.IBucket',
  data: 's3.IBucket',
  raw: 's3.IBucket',
  inventoryBucket: 's3.IBucket',
  vpc: 'ec2.IVpc',
  subnet: 'ec2.ISubnet',
  securityGroup: 'ec2.ISecurityGroup',
  fs: 'fsx.LustreFileSystem',
  fileSystemId: 'string',
  mountName: 'string',
  role: 'iam.IRole',
  dataset: 'ShardedDataset',
  cache: 'LustreDatasetCache',
  train: 'TrainingJob',
  job: 'TrainingJob',
};

/** The identifiers a block of code names (comments included: a name there only adds an unused import). */
function namesUsed(code: string): Set<string> {
  return new Set(code.match(/[A-Za-z_$][\w$]*/g) ?? []);
}

/** The names a block defines or imports itself. */
function namesDefined(code: string): Set<string> {
  const declared = [...code.matchAll(/\b(?:const|let|var|function|class|enum|interface|type)\s+([A-Za-z_$][\w$]*)/g)].map((match) => match[1]);
  const imported = [...code.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}/g)]
    .flatMap((match) => match[1].split(',').map((name) => name.trim().split(/\s+as\s+/).pop() ?? '').filter((name) => name !== ''));
  const namespaces = [...code.matchAll(/import\s+\*\s+as\s+([A-Za-z_$][\w$]*)/g)].map((match) => match[1]);
  return new Set([...declared, ...imported, ...namespaces]);
}

/**
 * The prelude for a fragment: imports of the library's exports (`libraryExports`), aws-cdk-lib's
 * names and modules, and declarations of the usual variables, each where the fragment (or a
 * variable's type) uses it and the fragment does not define it.
 */
export function fragmentPrelude(code: string, libraryExports: readonly string[]): string {
  const defined = namesDefined(code);
  const used = namesUsed(code);
  const variables = Object.entries(VARIABLES).filter(([name]) => used.has(name) && !defined.has(name));
  const needed = new Set([...used, ...variables.flatMap(([, type]) => [...namesUsed(type)])]);
  const wanted = (name: string) => needed.has(name) && !defined.has(name);
  const lines: string[] = [];
  const library = libraryExports.filter(wanted);
  if (library.length > 0) lines.push(`import { ${library.join(', ')} } from 'cdk-training-io';`);
  const cdk = CDK_NAMES.filter(wanted);
  if (cdk.length > 0) lines.push(`import { ${cdk.join(', ')} } from 'aws-cdk-lib';`);
  for (const [alias, module] of Object.entries(CDK_MODULES)) {
    if (wanted(alias)) lines.push(`import * as ${alias} from '${module}';`);
  }
  for (const [name, type] of variables) lines.push(`declare const ${name}: ${type};`);
  return lines.join('\n');
}
