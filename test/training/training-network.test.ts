import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as kms from 'aws-cdk-lib/aws-kms';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { TrainingJobProps} from '../../lib';
import {
  TrainingCode, TrainingContainer, TrainingEndpoint, TrainingInstance, TrainingJob, TrainingNetwork,
} from '../../lib';
import { testContainer, trainingTestStack } from '../support/stacks';

function newJob(stack: Stack, id: string, options: Partial<TrainingJobProps> = {}): TrainingJob {
  return new TrainingJob(stack, id, { instance: TrainingInstance.G5_2XLARGE, container: testContainer(), ...options });
}

/** A training code directory with these files, removed after the test run. */
function codeDirectory(files: Record<string, string>): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'training-code-'));
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(directory, name), text);
  directories.push(directory);
  return directory;
}
const directories: string[] = [];
afterAll(() => directories.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('TrainingNetwork', () => {
  test('three jobs without a vpc in one stack share one VPC, one output bucket and one security group', () => {
    // GIVEN
    const { stack } = trainingTestStack();

    // WHEN
    const jobs = ['A', 'B', 'C'].map((id) => newJob(stack, id));

    // THEN
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::EC2::VPC', 1);
    template.resourceCountIs('AWS::EC2::SecurityGroup', 1);
    // the test's data bucket and the shared output bucket
    template.resourceCountIs('AWS::S3::Bucket', 2);
    const network = TrainingNetwork.of(stack);
    for (const job of jobs) {
      expect(job.vpc).toBe(network.vpc);
      expect(job.outputBucket).toBe(network.outputBucket);
      expect(job.connections.securityGroups).toEqual([network.securityGroup]);
    }
    const groupId = stack.resolve(network.securityGroup.securityGroupId);
    expect(jobs.map((job) => stack.resolve(job.renderRequest()).VpcConfig.SecurityGroupIds)).toEqual([[groupId], [groupId], [groupId]]);
  });

  test('a network whose jobs all bring an output bucket creates none', () => {
    const { stack, bucket } = trainingTestStack();
    newJob(stack, 'A', { outputBucket: bucket });
    newJob(stack, 'B', { outputBucket: bucket });
    Template.fromStack(stack).resourceCountIs('AWS::S3::Bucket', 1);
    Template.fromStack(stack).resourceCountIs('AWS::EC2::VPC', 1);
  });

  test('opt-in interface endpoints take HTTPS from the training instances only', () => {
    // GIVEN
    const { stack } = trainingTestStack();

    // WHEN
    const network = new TrainingNetwork(stack, 'Network', { interfaceEndpoints: [TrainingEndpoint.STS, TrainingEndpoint.ECR] });
    network.addInterfaceEndpoint(TrainingEndpoint.STS);
    newJob(stack, 'Job', { network });

    // THEN
    const template = Template.fromStack(stack);
    // S3 gateway + STS + ECR API + ECR registry
    template.resourceCountIs('AWS::EC2::VPCEndpoint', 4);
    template.resourcePropertiesCountIs('AWS::EC2::VPCEndpoint', { VpcEndpointType: 'Interface', PrivateDnsEnabled: true }, 3);
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      IpProtocol: 'tcp', FromPort: 443, ToPort: 443,
      SourceSecurityGroupId: { 'Fn::GetAtt': [stack.getLogicalId(network.securityGroup.node.defaultChild as ec2.CfnSecurityGroup), 'GroupId'] },
    });
    expect(network.interfaceEndpoints).toEqual([TrainingEndpoint.STS, TrainingEndpoint.ECR]);
    expect(JSON.stringify(template.findResources('AWS::EC2::SecurityGroupIngress'))).not.toContain('0.0.0.0/0');
    const report = new AwsSolutionsChecks(stack).validateScope(stack.node.root);
    const findings = report.violations.flatMap((v) => v.violatingResources
      .filter((r) => !r.constructPath?.startsWith('Stack/Data')).map((r) => `${v.ruleName} at ${r.constructPath}`));
    expect(findings).toEqual([]);
  });

  test('warns when the training code calls an AWS API the isolated network has no endpoint for', () => {
    // GIVEN
    const { stack } = trainingTestStack();
    const code = TrainingCode.fromAsset(codeDirectory({
      'train.py': "import boto3\nsts = boto3.client('sts')\ns3 = boto3.client(\"s3\")\n",
    }), { program: 'train.py' });

    // WHEN
    newJob(stack, 'Job', { container: TrainingContainer.pytorch(), code });

    // THEN
    const annotations = Annotations.fromStack(stack);
    annotations.hasWarning('/Stack/Job', Match.stringLikeRegexp('calls sts \\(train.py\\).*TrainingEndpoint.STS'));
    // S3 goes through the gateway endpoint
    annotations.hasNoWarning('/Stack/Job', Match.stringLikeRegexp('calls s3'));
  });

  test('a service no TrainingEndpoint serves gets the advice to bring a vpc with a route to it', () => {
    const { stack } = trainingTestStack();
    const code = TrainingCode.fromAsset(codeDirectory({ 'train.py': "boto3.resource(service_name='dynamodb')\n" }), { program: 'train.py' });
    newJob(stack, 'Job', { container: TrainingContainer.pytorch(), code });
    Annotations.fromStack(stack).hasWarning('/Stack/Job', Match.stringLikeRegexp('calls dynamodb.*vpc of your own'));
  });

  test('reads only the files the code ships: a node_modules beside the script calls nothing', () => {
    // GIVEN: a CDK app's folder, whose dependencies' Python calls services
    const directory = codeDirectory({ 'train.py': 'print(1)\n' });
    fs.mkdirSync(path.join(directory, 'node_modules', 'aws-cdk-lib'), { recursive: true });
    fs.writeFileSync(path.join(directory, 'node_modules', 'aws-cdk-lib', 'handler.py'), "boto3.client('ecs')\n");
    const code = TrainingCode.fromAsset(directory, { program: 'train.py' });

    const { stack } = trainingTestStack();

    // WHEN
    newJob(stack, 'Job', { container: TrainingContainer.pytorch(), code });

    // THEN
    Annotations.fromStack(stack).hasNoWarning('/Stack/Job', Match.stringLikeRegexp('missingVpcEndpoint'));
  });

  test('with env.account, the default VPC asks for the zones lookup, and the context entry docs/constructs.md shows settles it offline', () => {
    // GIVEN: the entry the docs show, and a stack of that account and Region
    const page = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'constructs.md'), 'utf8');
    const entry = JSON.parse(/^```json\n(\{ "availability-zones:[^\n]*\})\n```$/m.exec(page)![1]) as Record<string, string[]>;
    const [key] = Object.keys(entry);
    const [, account, region] = /^availability-zones:account=(\d+):region=([\w-]+)$/.exec(key)!;
    const synthesized = (context: Record<string, unknown>) => {
      const app = new App({ context });
      const stack = new Stack(app, 'Stack', { env: { account, region } });
      newJob(stack, 'Job');
      return { assembly: app.synth(), stack };
    };

    // WHEN
    const offline = synthesized({});
    const recorded = synthesized(entry);

    // THEN: without the entry the CLI would have to call the account; with it, nothing is missing and the subnets use its zones
    expect((offline.assembly.manifest.missing ?? []).map((missing) => missing.key)).toEqual([key]);
    expect(recorded.assembly.manifest.missing ?? []).toEqual([]);
    const zones = Object.values(Template.fromStack(recorded.stack).findResources('AWS::EC2::Subnet')).map((subnet) => subnet.Properties.AvailabilityZone);
    expect([...new Set(zones)].sort()).toEqual(entry[key].slice(0, 2));
  });

  test('does not warn once the endpoint is there', () => {
    const { stack } = trainingTestStack();
    const code = TrainingCode.fromAsset(codeDirectory({ 'train.py': "boto3.client('sts')\n" }), { program: 'train.py' });
    TrainingNetwork.of(stack, { interfaceEndpoints: [TrainingEndpoint.STS] });
    newJob(stack, 'Job', { container: TrainingContainer.pytorch(), code });
    Annotations.fromStack(stack).hasNoWarning('/Stack/Job', Match.stringLikeRegexp('missingVpcEndpoint'));
  });

  test('warns that a requirements.txt cannot be installed from isolated subnets', () => {
    const { stack } = trainingTestStack();
    const code = TrainingCode.fromAsset(codeDirectory({ 'train.py': 'print(1)\n', 'requirements.txt': 'timm\n' }), { program: 'train.py' });
    newJob(stack, 'Job', { container: TrainingContainer.pytorch(), code });
    Annotations.fromStack(stack).hasWarning('/Stack/Job', Match.stringLikeRegexp('packageInstallInIsolatedNetwork|cannot reach PyPI'));
  });

  test('the reference code needs no endpoint: no warning', () => {
    const { stack } = trainingTestStack();
    newJob(stack, 'Job', { container: TrainingContainer.pytorch() });
    Annotations.fromStack(stack).hasNoWarning('/Stack/Job', Match.anyValue());
  });

  test('a job that asks for another key than the shared network\'s is told to create its own network', () => {
    const { stack } = trainingTestStack();
    newJob(stack, 'A');
    expect(() => newJob(stack, 'B', { encryptionKey: new kms.Key(stack, 'Key') })).toThrow(/SharedNetworkConflict.*encryptionKey none/);
  });

  test('network and vpc together are refused', () => {
    const { stack } = trainingTestStack();
    const network = new TrainingNetwork(stack, 'Network');
    expect(() => newJob(stack, 'Job', { network, vpc: new ec2.Vpc(stack, 'Vpc') })).toThrow(/NetworkAndVpc/);
  });

  test('a job with its own vpc does not touch the shared network', () => {
    const { stack } = trainingTestStack();
    newJob(stack, 'Job', { vpc: new ec2.Vpc(stack, 'Vpc', { natGateways: 0 }) });
    expect(stack.node.tryFindChild('TrainingNetwork')).toBeUndefined();
  });
});
