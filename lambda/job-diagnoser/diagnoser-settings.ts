import { describe, HandlerInputError, stringField, eventObject } from '../handler-kit/handler-input';
import type { InstanceHardware } from '../diagnosis/collect-metrics';
import { DIAGNOSER_ENV } from '../../lib/contract/handler-environment';
import { LOADER_METRICS } from '../../lib/contract/metric-names';

type Environment = Readonly<Record<string, string | undefined>>;

/** What the diagnoser works with, from the environment the TrainingPipeline construct sets. */
export interface DiagnoserSettings {
  readonly hardware: InstanceHardware;
  readonly loaderMetrics: { readonly samplesPerSecond: string; readonly dataWaitFraction: string };
  readonly cache?: { readonly fileSystemId: string; readonly baselineMBps: number };
  readonly eventBusName: string;
}

/** Reads and checks the environment; errors name the variable and the value. */
export function readDiagnoserSettings(env: Environment): DiagnoserSettings {
  const fileSystemId = env[DIAGNOSER_ENV.cacheFileSystemId];
  const hasCache = fileSystemId !== undefined && fileSystemId !== '';
  return {
    hardware: {
      gpusPerInstance: wholeNumber(env, DIAGNOSER_ENV.gpusPerInstance, 0),
      vcpusPerInstance: wholeNumber(env, DIAGNOSER_ENV.vcpusPerInstance, 1),
    },
    loaderMetrics: {
      samplesPerSecond: env[DIAGNOSER_ENV.samplesPerSecondMetric] || LOADER_METRICS.samplesPerSecond,
      dataWaitFraction: env[DIAGNOSER_ENV.dataWaitMetric] || LOADER_METRICS.dataWaitFraction,
    },
    ...(hasCache ? { cache: { fileSystemId, baselineMBps: positiveNumber(env, DIAGNOSER_ENV.cacheBaselineMBps) } } : {}),
    eventBusName: required(env, DIAGNOSER_ENV.eventBusName),
  };
}

/** The job named by the event. */
export function parseDiagnoserEvent(event: unknown): { trainingJobName: string } {
  const trainingJobName = stringField('job-diagnoser', eventObject('job-diagnoser', event), 'trainingJobName');
  if (!/^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/.test(trainingJobName)) {
    throw new HandlerInputError(`job-diagnoser: event field 'trainingJobName' must be a SageMaker training job name, got ${describe(trainingJobName)}`);
  }
  return { trainingJobName };
}

function required(env: Environment, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new HandlerInputError(`environment variable ${name} is not set: the TrainingPipeline construct sets it`);
  }
  return value;
}

function wholeNumber(env: Environment, name: string, min: number): number {
  const text = required(env, name);
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min) {
    throw new HandlerInputError(`environment variable ${name} must be a whole number of at least ${min}, got '${text}'`);
  }
  return value;
}

function positiveNumber(env: Environment, name: string): number {
  const text = required(env, name);
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) {
    throw new HandlerInputError(`environment variable ${name} must be a number greater than 0, got '${text}'`);
  }
  return value;
}
