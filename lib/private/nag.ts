import { Stack, Validations } from 'aws-cdk-lib';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';

/**
 * Accepted cdk-nag findings travel with the constructs that cause them, through aws-cdk-lib's own
 * `Validations.acknowledge` (which cdk-nag 3 reads), so users running AwsSolutionsChecks see only
 * findings about their own choices. cdk-nag itself is not a runtime dependency.
 */
export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}

/** The IAM5 finding id cdk-nag reports for a wildcard resource, e.g. `AwsSolutions-IAM5[Resource::<Bucket.Arn>/shards/*]`. */
export function wildcardResourceFinding(scope: IConstruct, arn: string): string {
  return `AwsSolutions-IAM5[Resource::${flattenReference(Stack.of(scope).resolve(arn))}]`;
}

/** Action groups of aws-cdk-lib's S3 and KMS grant methods (read, put, read/write). */
const GRANT_ACTION_GROUPS = [
  's3:GetObject*', 's3:GetBucket*', 's3:List*', 's3:Abort*', 's3:DeleteObject*', 'kms:GenerateDataKey*', 'kms:ReEncrypt*',
];

/** Accepts the findings of a grant on the objects under one prefix of a bucket. */
export function acknowledgePrefixGrant(scope: IConstruct, bucket: s3.IBucket, prefix: string, what: string): void {
  acknowledge(scope, wildcardResourceFinding(scope, bucket.arnForObjects(`${prefix}*`)),
    `${what}: access is limited to the objects under this one prefix`);
  for (const action of GRANT_ACTION_GROUPS) {
    acknowledge(scope, `AwsSolutions-IAM5[Action::${action}]`,
      'action group of an aws-cdk-lib grant method; the resources it applies to are scoped to single prefixes and keys');
  }
}

/**
 * The flattening cdk-nag applies to CloudFormation references before it names a finding
 * (cdk-nag `utils/flatten-cfn-reference`), so acknowledgements match exactly.
 */
function flattenReference(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\${/g, '<').replace(/}/g, '>');
  if (typeof node === 'object' && node !== null) {
    const entry = node as Record<string, any>;
    if ('Fn::Join' in entry) {
      const [delimiter, items] = entry['Fn::Join'];
      return (items as unknown[]).map(flattenReference).join(delimiter);
    }
    if ('Fn::Sub' in entry) return flattenReference(entry['Fn::Sub']);
    if ('Fn::GetAtt' in entry) {
      const [resource, attribute] = entry['Fn::GetAtt'];
      return `<${flattenReference(resource)}.${flattenReference(attribute)}>`;
    }
    if ('Fn::ImportValue' in entry) return flattenReference(entry['Fn::ImportValue']);
    if ('Ref' in entry) return `<${flattenReference(entry.Ref)}>`;
  }
  return JSON.stringify(node);
}
