import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { THRESHOLDS } from '../../contract/diagnosis-thresholds';
import { FSX_READ_METRIC, LIBRARY_METRICS_NAMESPACE, PACKER_METRICS, SAGEMAKER_TRAINING_METRICS } from '../../contract/metric-names';

/** What the dashboard shows. */
export interface PipelineDashboardProps {
  readonly dashboardName?: string;
  readonly stateMachine: sfn.StateMachine;
  /** Prefix of the pipeline's job names: the SEARCH expressions find their hosts by it. */
  readonly jobNamePrefix: string;
  readonly gpusPerInstance: number;
  readonly vcpusPerInstance: number;
  /** Metric-definition names of the loader's samples/s and data wait, when the code defines them. */
  readonly samplesPerSecondMetric?: string;
  readonly dataWaitMetric?: string;
  readonly cache?: { readonly fileSystemId: string; readonly baselineMBps?: number };
}

const PERIOD = Duration.minutes(1);

/**
 * The pipeline's dashboard: per-host GPU, CPU, memory and disk of its jobs (SEARCH expressions,
 * since every run's job has a new name), the loader's samples/s and data wait, FSx read throughput
 * against the cache's baseline, packer throughput, and the executions.
 *
 * Thresholds of the diagnosis are drawn as horizontal lines, scaled to the instance: GPUUtilization
 * is 0–100 × GPUs and CPUUtilization 0–100 × vCPUs per host.
 */
export function createPipelineDashboard(scope: Construct, id: string, props: PipelineDashboardProps): cloudwatch.Dashboard {
  const dashboard = new cloudwatch.Dashboard(scope, id, {
    dashboardName: props.dashboardName,
    defaultInterval: Duration.days(1),
  });
  for (const row of [headerRow(props), hostUtilizationRow(props), hostCapacityRow(props), loaderRow(props), dataPathRow(props), executionsRow(props)]) {
    if (row.length) dashboard.addWidgets(...row);
  }
  return dashboard;
}

/** A SEARCH over the jobs' metric `metric`, per host or per job, found by the pipeline's job-name prefix. */
function trainingSearch(props: PipelineDashboardProps, dimension: 'hostDimension' | 'jobDimension', metric: string): cloudwatch.SearchExpression {
  const name = SAGEMAKER_TRAINING_METRICS[dimension];
  return new cloudwatch.SearchExpression({
    expression: `SEARCH('{${SAGEMAKER_TRAINING_METRICS.namespace},${name}} `
      + `MetricName="${metric}" ${name}=${props.jobNamePrefix}', 'Average', ${PERIOD.toSeconds()})`,
    period: PERIOD,
  });
}

/** GPUUtilization's and GPUMemoryUtilization's full scale: 100 % per GPU. */
function gpuScale(props: PipelineDashboardProps): number {
  return 100 * Math.max(props.gpusPerInstance, 1);
}

function headerRow(props: PipelineDashboardProps): cloudwatch.IWidget[] {
  return [new cloudwatch.TextWidget({
    markdown: `## Training pipeline: jobs \`${props.jobNamePrefix}-*\`\n`
      + `Per host, as SageMaker reports them: GPU ${props.gpusPerInstance} × 100 %, CPU ${props.vcpusPerInstance} × 100 %. `
      + `Lines mark where the diagnosis calls the GPUs underused (${THRESHOLDS.gpuLowPercent} % per GPU) and the CPUs `
      + `saturated (${THRESHOLDS.cpuHighPercent} %). `
      + 'Each job\'s report is in its output folder, `<job>/diagnosis/report.md`.',
    width: 24,
    height: 2,
  })];
}

function hostUtilizationRow(props: PipelineDashboardProps): cloudwatch.IWidget[] {
  const gpuMax = gpuScale(props);
  const cpuMax = 100 * props.vcpusPerInstance;
  return [
    new cloudwatch.GraphWidget({
      title: `GPU utilization per host (0–${gpuMax} %)`,
      left: [trainingSearch(props, 'hostDimension', SAGEMAKER_TRAINING_METRICS.gpu)],
      leftYAxis: { min: 0, max: gpuMax, showUnits: false },
      leftAnnotations: [{ value: THRESHOLDS.gpuLowPercent / 100 * gpuMax, label: `GPU underused below ${THRESHOLDS.gpuLowPercent} % per GPU`, color: cloudwatch.Color.ORANGE }],
      width: 12,
    }),
    new cloudwatch.GraphWidget({
      title: `CPU utilization per host (0–${cpuMax} %)`,
      left: [trainingSearch(props, 'hostDimension', SAGEMAKER_TRAINING_METRICS.cpu)],
      leftYAxis: { min: 0, max: cpuMax, showUnits: false },
      leftAnnotations: [{ value: THRESHOLDS.cpuHighPercent / 100 * cpuMax, label: `CPU saturated above ${THRESHOLDS.cpuHighPercent} %`, color: cloudwatch.Color.RED }],
      width: 12,
    }),
  ];
}

function hostCapacityRow(props: PipelineDashboardProps): cloudwatch.IWidget[] {
  const gpuMax = gpuScale(props);
  return [
    new cloudwatch.GraphWidget({
      title: `GPU memory per host (0–${gpuMax} %)`,
      left: [trainingSearch(props, 'hostDimension', SAGEMAKER_TRAINING_METRICS.gpuMemory)],
      leftYAxis: { min: 0, max: gpuMax, showUnits: false },
      leftAnnotations: [{ value: THRESHOLDS.gpuMemoryHeadroomPercent / 100 * gpuMax, label: `room for bigger batches below ${THRESHOLDS.gpuMemoryHeadroomPercent} %`, color: cloudwatch.Color.GREY }],
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'Host memory per host (%)',
      left: [trainingSearch(props, 'hostDimension', SAGEMAKER_TRAINING_METRICS.memory)],
      leftYAxis: { min: 0, max: 100, showUnits: false },
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'Disk space used per host (%)',
      left: [trainingSearch(props, 'hostDimension', SAGEMAKER_TRAINING_METRICS.disk)],
      leftYAxis: { min: 0, max: 100, showUnits: false },
      width: 8,
    }),
  ];
}

/** The loader's own metrics, those the training code defines (none is a row of none). */
function loaderRow(props: PipelineDashboardProps): cloudwatch.IWidget[] {
  const loader: cloudwatch.IWidget[] = [];
  if (props.samplesPerSecondMetric) {
    loader.push(new cloudwatch.GraphWidget({
      title: 'Loader throughput (samples/s, as the training code logs it)',
      left: [trainingSearch(props, 'jobDimension', props.samplesPerSecondMetric)],
      width: 12,
    }));
  }
  if (props.dataWaitMetric) {
    loader.push(new cloudwatch.GraphWidget({
      title: 'Share of time the training loop waited for data',
      left: [trainingSearch(props, 'jobDimension', props.dataWaitMetric)],
      leftYAxis: { min: 0, max: 1, showUnits: false },
      leftAnnotations: [{ value: THRESHOLDS.dataWaitShare, label: `input-bound above ${THRESHOLDS.dataWaitShare}`, color: cloudwatch.Color.ORANGE }],
      width: 12,
    }));
  }
  return loader;
}

/** The cache's read throughput (with a cache) beside the packers' throughput. */
function dataPathRow(props: PipelineDashboardProps): cloudwatch.IWidget[] {
  const dataPath: cloudwatch.IWidget[] = props.cache ? [cacheReadWidget(props.cache)] : [];
  const packerMetric = (metricName: string, statistic: string) => new cloudwatch.Metric({
    namespace: LIBRARY_METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { service: PACKER_METRICS.service },
    statistic,
    period: PERIOD,
  });
  dataPath.push(new cloudwatch.GraphWidget({
    title: 'Packing: records packed, and input MB/s per packer',
    left: [packerMetric(PACKER_METRICS.records, cloudwatch.Stats.SUM)],
    right: [packerMetric(PACKER_METRICS.inputMegabytesPerSecond, cloudwatch.Stats.AVERAGE)],
    width: props.cache ? 12 : 24,
  }));
  return dataPath;
}

function cacheReadWidget(cache: NonNullable<PipelineDashboardProps['cache']>): cloudwatch.IWidget {
  const readBytes = new cloudwatch.Metric({
    namespace: FSX_READ_METRIC.namespace,
    metricName: FSX_READ_METRIC.name,
    dimensionsMap: { [FSX_READ_METRIC.dimension]: cache.fileSystemId },
    statistic: cloudwatch.Stats.SUM,
    period: PERIOD,
  });
  return new cloudwatch.GraphWidget({
    title: 'FSx for Lustre read throughput (MB/s)',
    left: [new cloudwatch.MathExpression({
      expression: `readBytes / ${PERIOD.toSeconds()} / 1000000`,
      usingMetrics: { readBytes },
      label: 'read MB/s',
      period: PERIOD,
    })],
    leftYAxis: { min: 0, showUnits: false },
    leftAnnotations: cache.baselineMBps !== undefined
      ? [{ value: cache.baselineMBps, label: 'provisioned baseline', color: cloudwatch.Color.RED }] : [],
    width: 12,
  });
}

function executionsRow(props: PipelineDashboardProps): cloudwatch.IWidget[] {
  const hourly = { period: Duration.hours(1) };
  return [new cloudwatch.GraphWidget({
    title: 'Pipeline executions',
    left: [
      props.stateMachine.metricStarted(hourly),
      props.stateMachine.metricSucceeded(hourly),
      props.stateMachine.metricFailed(hourly),
      props.stateMachine.metricTimedOut(hourly),
      props.stateMachine.metricAborted(hourly),
    ],
    width: 24,
  })];
}
