import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { S3TestServer } from './s3-server';
import { StateMachineRunner } from './state-machine-runner';

/** No test here reaches a server: the definitions have no task that would. */
const NO_SERVER = { s3: { endpoint: 'http://127.0.0.1:9', region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } } as S3TestServer };

function runnerOf(define: (stack: Stack) => sfn.IChainable): StateMachineRunner {
  const stack = new Stack(new App(), 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
  new sfn.StateMachine(stack, 'Machine', { definitionBody: sfn.DefinitionBody.fromChainable(define(stack)) });
  return StateMachineRunner.fromTemplate(Template.fromStack(stack), NO_SERVER);
}

describe('StateMachineRunner: what it stands in for', () => {
  test('workflow variables: a literal Assign of a state or a catcher is read back as $name', async () => {
    // GIVEN a Pass that assigns, and a failing state whose catcher assigns over it
    const runner = runnerOf((stack) => {
      const report = new sfn.Pass(stack, 'Report', {
        parameters: { 'step': sfn.JsonPath.stringAt('$step'), 'error.$': '$.failure.Error', 'before.$': '$.step' },
      });
      const work = new sfn.Parallel(stack, 'Work').branch(new sfn.Fail(stack, 'Boom', { error: 'Boom' }));
      work.addCatch(report, { resultPath: '$.failure', assign: { step: 'Work' } });
      return new sfn.Pass(stack, 'Start', { assign: { step: 'Start' } })
        .next(new sfn.Pass(stack, 'Read', { parameters: { step: sfn.JsonPath.stringAt('$step') } }))
        .next(work);
    });

    // WHEN
    const execution = await runner.run({});

    // THEN the harness's own states are not listed
    expect(execution.states).toEqual(['Start', 'Read', 'Work', 'Boom', 'Report']);
    expect(execution.output).toEqual({ step: 'Work', error: 'Boom', before: 'Start' });
  });

  test('an Assign of a path is refused, not emulated wrongly', async () => {
    await expect(runnerOf((stack) => new sfn.Pass(stack, 'Start', { assign: { seen: sfn.JsonPath.stringAt('$.a') } })).run({}))
      .rejects.toThrow(/state Start: Assign of paths \(seen\.\$\) is not emulated, only literal values/);
  });

  test('a task with no local counterpart is refused, naming the state and the resource', async () => {
    const runner = runnerOf((stack) => new sfn.CustomState(stack, 'Query', {
      stateJson: { Type: 'Task', Resource: 'arn:aws:states:::dynamodb:getItem', Parameters: { TableName: 't', Key: {} } },
    }));
    await expect(runner.run({})).rejects.toThrow(/state Query: no local counterpart of arn:aws:states:::dynamodb:getItem/);
  });
});
