#!/usr/bin/env node
// The reference app: `npx cdk synth [-c scenario=nvme|pipeline|pipe|fastfile|packed|fsx|regulated]` builds the
// example training stack offline, environment-agnostic, with no AWS account. The regulated scenario writes its
// S3 server access logs to the bucket `-c accessLogsBucket=<name>` names.
import type { Scenario} from './reference-stack';
import { createReferenceApp, DEFAULT_SCENARIO, ReferenceTrainingStack, SCENARIOS } from './reference-stack';

const app = createReferenceApp();
const scenario = (app.node.tryGetContext('scenario') ?? DEFAULT_SCENARIO) as Scenario;
if (!SCENARIOS.includes(scenario)) {
  throw new Error(`-c scenario=${scenario} is not a reference scenario; use one of: ${SCENARIOS.join(', ')}`);
}
new ReferenceTrainingStack(app, 'TrainingIoReference', {
  scenario,
  accessLogsBucketName: app.node.tryGetContext('accessLogsBucket'),
  description: `cdk-training-io reference training stack (scenario: ${scenario})`,
});
app.synth();
