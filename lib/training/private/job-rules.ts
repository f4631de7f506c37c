import { Duration, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { JOB_NAME_PREFIX_PATTERN, MAX_JOB_NAME_PREFIX_LENGTH } from './job-naming';
import { ValidationError } from '../../private/errors';
import { isResolved, validateWholeNumber } from '../../private/validation';
import type { TrainingInstance } from '../../instances/training-instance';
import type { TrainingContainerConfig } from '../training-container';
import type { TrainingJobProps } from '../training-job';

/** SageMaker's ceiling for MaxRuntimeInSeconds. */
const MAX_RUNTIME = Duration.days(28);
const ENVIRONMENT_KEY_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** The SageMaker API's TrainingPlanArn shape. */
const TRAINING_PLAN_ARN_PATTERN = /^arn:aws[a-z-]*:sagemaker:[a-z0-9-]*:[0-9]{12}:training-plan\/.+$/;

/**
 * The synth-time rules of a training job that need only its props; rules that need the bound
 * channels or the instance storage live in the construct.
 */
export function validateJobProps(scope: Construct, props: TrainingJobProps): void {
  validateAccelerator(scope, props);
  validateInstanceCount(scope, props.instanceCount);
  validateChannelCount(scope, props);
  validateStopping(scope, props);
  validateWholeNumber(scope, 'InvalidRetryAttempts', 'retryAttempts', props.retryAttempts, 1, 30);
  validateLoaderWorkers(scope, props);
  validateKeepAlive(scope, props);
  validateJobNamePrefix(scope, props.jobNamePrefix);
  validateOutputPrefix(scope, props.outputPrefix);
  validateNetworkChoice(scope, props);
  validateEnvironment(scope, props.environment);
  validateMetricDefinitions(scope, props);
  validateTags(scope, props.tags);
  validateTrainingPlanArn(scope, props.trainingPlanArn);
}

function validateTrainingPlanArn(scope: Construct, arn: string | undefined): void {
  if (arn === undefined || Token.isUnresolved(arn) || TRAINING_PLAN_ARN_PATTERN.test(arn)) return;
  throw new ValidationError('InvalidTrainingPlanArn',
    `trainingPlanArn must be a SageMaker training plan ARN (arn:aws:sagemaker:<region>:<account>:training-plan/<name>), got '${arn}'`, scope);
}

function validateAccelerator(scope: Construct, props: TrainingJobProps): void {
  if (props.instance.acceleratorCount > 0 || props.allowInstanceWithoutAccelerator) return;
  throw new ValidationError('InstanceWithoutAccelerator',
    `instance ${props.instance.instanceType} has no GPU or Trainium device; choose a GPU instance ` +
    '(e.g. TrainingInstance.G5_2XLARGE), or set allowInstanceWithoutAccelerator: true for CPU training', scope);
}

/**
 * A CUDA image cannot drive Trainium (or any instance without NVIDIA GPUs): the Neuron SDK runs
 * one process per NeuronCore, and its images are the Neuron Deep Learning Containers.
 */
export function validateContainerForInstance(scope: Construct, instance: TrainingInstance, container: TrainingContainerConfig): void {
  if (!container.nvidiaOnlyImage || instance.gpus > 0 || instance.trainiumDevices === 0) return;
  throw new ValidationError('GpuContainerOnTrainium',
    `instance ${instance.instanceType} has ${instance.trainiumDevices} Trainium device(s) and no NVIDIA GPU, but the container is `
    + `${container.nvidiaOnlyImage}, built for CUDA; use a Neuron container with TrainingContainer.fromImageUri() `
    + '(an AWS Neuron Deep Learning Container, e.g. pytorch-training-neuronx) and processesPerInstance set to its NeuronCores', scope);
}

function validateInstanceCount(scope: Construct, count: number | undefined): void {
  validateWholeNumber(scope, 'InvalidInstanceCount', 'instanceCount', count, 1, 10000);
}

function validateChannelCount(scope: Construct, props: TrainingJobProps): void {
  const count = props.channels?.length ?? 0;
  if (count > 20) {
    throw new ValidationError('TooManyChannels', `channels may hold at most 20 channels, got ${count}`, scope);
  }
}

function validateStopping(scope: Construct, props: TrainingJobProps): void {
  const runtime = props.maxRuntime;
  if (runtime && !runtime.isUnresolved()) {
    const seconds = runtime.toSeconds();
    if (seconds < 1 || seconds > MAX_RUNTIME.toSeconds()) {
      throw new ValidationError('InvalidMaxRuntime',
        `maxRuntime must be between 1 second and 28 days, got ${runtime.toHumanString()}; ` +
        'split longer training into jobs that resume from checkpoints', scope);
    }
  }
  if (props.maxWaitTime && !props.useSpotInstances) {
    throw new ValidationError('MaxWaitTimeRequiresSpot',
      'maxWaitTime applies only to managed spot training; set useSpotInstances: true, or remove maxWaitTime', scope);
  }
  if (props.useSpotInstances && !props.maxWaitTime && runtime?.isUnresolved()) {
    throw new ValidationError('MaxWaitTimeNeededForTokenRuntime',
      'maxRuntime is only known at deploy time, so the default maxWaitTime (twice maxRuntime) cannot be computed; ' +
      'set maxWaitTime to at least maxRuntime', scope);
  }
  const wait = props.maxWaitTime;
  if (wait && !wait.isUnresolved() && (!runtime || !runtime.isUnresolved())) {
    const runSeconds = (runtime ?? Duration.days(1)).toSeconds();
    if (wait.toSeconds() < runSeconds) {
      throw new ValidationError('MaxWaitTimeBelowMaxRuntime',
        `maxWaitTime (${wait.toHumanString()}) must be at least maxRuntime (${runSeconds} seconds): ` +
        'it covers the wait for spot capacity plus the run', scope);
    }
  }
}

function validateKeepAlive(scope: Construct, props: TrainingJobProps): void {
  const keepAlive = props.keepAlivePeriod;
  if (!keepAlive || keepAlive.isUnresolved()) return;
  const seconds = keepAlive.toSeconds();
  if (seconds < 0 || seconds > 21600) {
    throw new ValidationError('InvalidKeepAlivePeriod',
      `keepAlivePeriod must be between 0 and 6 hours, got ${keepAlive.toHumanString()}`, scope);
  }
  if (seconds > 0 && props.useSpotInstances) {
    throw new ValidationError('KeepAliveWithSpot',
      'keepAlivePeriod (warm pools) is not available with managed spot training; remove one of them', scope);
  }
}

function validateJobNamePrefix(scope: Construct, prefix: string | undefined): void {
  if (!isResolved(prefix)) return;
  if (prefix.length > MAX_JOB_NAME_PREFIX_LENGTH || !JOB_NAME_PREFIX_PATTERN.test(prefix)) {
    throw new ValidationError('InvalidJobNamePrefix',
      `jobNamePrefix must be 1–${MAX_JOB_NAME_PREFIX_LENGTH} letters, digits and inner hyphens ` +
      `(each run appends '-<uuid>' to stay within SageMaker's 63 characters), got '${prefix}'`, scope);
  }
}

function validateOutputPrefix(scope: Construct, prefix: string | undefined): void {
  if (!isResolved(prefix)) return;
  if (prefix.startsWith('/') || prefix.length > 900) {
    throw new ValidationError('InvalidOutputPrefix',
      `outputPrefix must be a relative S3 key prefix (no leading '/', at most 900 characters), got '${prefix}'`, scope);
  }
}

function validateNetworkChoice(scope: Construct, props: TrainingJobProps): void {
  if (props.subnet && props.vpcSubnets) {
    throw new ValidationError('SubnetAndVpcSubnets',
      'subnet pins the job to one subnet and vpcSubnets selects several: set only one of them', scope);
  }
  if ((props.subnet || props.vpcSubnets) && !props.vpc) {
    throw new ValidationError('SubnetsWithoutVpc', 'subnet and vpcSubnets need the vpc they belong to: set vpc', scope);
  }
  const groups = props.securityGroups?.length ?? 0;
  if (props.securityGroups && (groups < 1 || groups > 5)) {
    throw new ValidationError('InvalidSecurityGroupCount', `securityGroups must hold 1–5 groups, got ${groups}`, scope);
  }
}

function validateEnvironment(scope: Construct, environment: { [name: string]: string } | undefined): void {
  if (!environment) return;
  const entries = Object.entries(environment);
  if (entries.length > 100) {
    throw new ValidationError('InvalidEnvironment', `environment may hold at most 100 variables, got ${entries.length}`, scope);
  }
  for (const [key, value] of entries) {
    if (Token.isUnresolved(key)) continue;
    if (key.length > 512 || !ENVIRONMENT_KEY_PATTERN.test(key)) {
      throw new ValidationError('InvalidEnvironment',
        `environment variable names must match [a-zA-Z_][a-zA-Z0-9_]* and be at most 512 characters, got '${key}'`, scope);
    }
    if (isResolved(value) && value.length > 512) {
      throw new ValidationError('InvalidEnvironment',
        `environment variable ${key} must be at most 512 characters, got ${value.length}`, scope);
    }
  }
}

/** Hyperparameter limits of CreateTrainingJob (checked on the merged map): keys ≤ 256 and values ≤ 2500 characters. */
export function validateHyperparameters(scope: Construct, hyperparameters: { [name: string]: string } | undefined): void {
  if (!hyperparameters) return;
  const entries = Object.entries(hyperparameters);
  if (entries.length > 100) {
    throw new ValidationError('InvalidHyperparameters', `a job takes at most 100 hyperparameters, got ${entries.length}`, scope);
  }
  for (const [key, value] of entries) {
    if (typeof value !== 'string') {
      throw new ValidationError('InvalidHyperparameters',
        `hyperparameter ${key} must be a string (SageMaker passes strings; the toolkit JSON-decodes them), got ${typeof value}`, scope);
    }
    if (!Token.isUnresolved(key) && key.length > 256) {
      throw new ValidationError('InvalidHyperparameters', `hyperparameter names must be at most 256 characters, got '${key}'`, scope);
    }
    if (isResolved(value) && value.length > 2500) {
      throw new ValidationError('InvalidHyperparameters',
        `hyperparameter ${key} must be at most 2500 characters, got ${value.length}`, scope);
    }
  }
}

function validateMetricDefinitions(scope: Construct, props: TrainingJobProps): void {
  const definitions = props.metricDefinitions ?? [];
  if (definitions.length > 40) {
    throw new ValidationError('InvalidMetricDefinition', `metricDefinitions may hold at most 40, got ${definitions.length}`, scope);
  }
  for (const { name, regex } of definitions) {
    if (isResolved(name) && (name.length < 1 || name.length > 255)) {
      throw new ValidationError('InvalidMetricDefinition', `metric names must be 1–255 characters, got '${name}'`, scope);
    }
    if (isResolved(regex) && (regex.length < 1 || regex.length > 500)) {
      throw new ValidationError('InvalidMetricDefinition', `metric ${name}: regex must be 1–500 characters, got ${regex.length}`, scope);
    }
  }
}

function validateTags(scope: Construct, tags: { [key: string]: string } | undefined): void {
  if (!tags) return;
  const entries = Object.entries(tags);
  if (entries.length > 50) {
    throw new ValidationError('InvalidTags', `a training job takes at most 50 tags, got ${entries.length}`, scope);
  }
  for (const [key, value] of entries) {
    if (Token.isUnresolved(key)) continue;
    if (key.length < 1 || key.length > 128 || key.toLowerCase().startsWith('aws:')) {
      throw new ValidationError('InvalidTags', `tag keys must be 1–128 characters and not start with 'aws:', got '${key}'`, scope);
    }
    if (isResolved(value) && value.length > 256) {
      throw new ValidationError('InvalidTags', `tag ${key} must be at most 256 characters, got ${value.length}`, scope);
    }
  }
}

function validateLoaderWorkers(scope: Construct, props: TrainingJobProps): void {
  if (props.loaderWorkers !== undefined && props.dataLoaderWorkers !== undefined) {
    throw new ValidationError('LoaderWorkersTwice',
      `give loaderWorkers or its deprecated name dataLoaderWorkers, not both, got ${props.loaderWorkers} and ${props.dataLoaderWorkers}`, scope);
  }
  validateWholeNumber(scope, 'InvalidDataLoaderWorkers', props.loaderWorkers !== undefined ? 'loaderWorkers' : 'dataLoaderWorkers',
    props.loaderWorkers ?? props.dataLoaderWorkers, 0, 1024);
}
