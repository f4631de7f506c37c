import type { Diagnosis } from './diagnosis';
import { duration } from './report-format';

/** Short names of the verdicts, for headings. */
const VERDICT_TITLES: Record<Diagnosis['verdict'], string> = {
  'long-download': 'Long download before training',
  'preprocessing-bound': 'Preprocessing-bound (CPU)',
  'input-bound': 'Input-bound (I/O or too few loader workers)',
  'gpu-memory-headroom': 'GPU memory headroom (batch size)',
  'step-bound': 'Step-bound (the training step itself)',
  'healthy': 'Healthy: the GPUs were fed',
  'insufficient-data': 'Not enough data to judge',
  'job-failed': 'Failed',
  'job-stopped': 'Stopped before it completed',
};

/** The report as Markdown: verdict, what to change, the evidence, the timeline, the hosts, the thresholds. */
export function renderMarkdown(diagnosis: Diagnosis): string {
  const { job } = diagnosis;
  const lines: string[] = [
    `# Training job ${job.name}: ${VERDICT_TITLES[diagnosis.verdict]}`,
    '',
    diagnosis.summary,
    '',
    `- Job: ${job.status}${job.failureReason ? ` (${job.failureReason})` : ''}, ${job.instanceCount} × ${job.instanceType} `
      + `(${job.gpusPerInstance} GPU(s), ${job.vcpusPerInstance} vCPUs each)`
      + `${job.dataLoaderWorkers !== undefined ? `, ${job.dataLoaderWorkers} data-loader workers per process` : ''}`,
  ];
  if (diagnosis.loader) {
    const { samplesPerSecondMean, dataWaitMean } = diagnosis.loader;
    lines.push(`- Loader: ${samplesPerSecondMean !== undefined ? `${samplesPerSecondMean} samples/s` : 'samples/s not reported'}, `
      + `${dataWaitMean !== undefined ? `waiting for data ${round(dataWaitMean * 100)} % of the time` : 'data wait not reported'}`);
  }
  for (const finding of diagnosis.findings) {
    // The verdict's own finding is the title and the summary above: its details follow them, once.
    const isVerdict = finding.verdict === diagnosis.verdict && finding.summary === diagnosis.summary;
    if (!isVerdict) lines.push('', `## ${VERDICT_TITLES[finding.verdict]}`, '', finding.summary);
    if (finding.idleGpuSeconds > 0) lines.push('', `About ${round(finding.idleGpuSeconds / 3600)} GPU-hours idle.`);
    if (finding.advice.length) lines.push('', '**What to change**', '', ...finding.advice.map((a) => `- ${a}`));
    if (finding.evidence.length) lines.push('', '**Evidence**', '', ...finding.evidence.map((e) => `- ${e}`));
  }
  lines.push('', '## Timeline', '', '| Status | Time |', '| --- | --- |',
    ...diagnosis.phases.map((p) => `| ${p.status} | ${duration(p.seconds)} |`));
  if (diagnosis.hosts.length) {
    lines.push('', '## Hosts (training phase, p95)', '', '| Host | Samples | GPU % | CPU % | GPU memory % | Memory % | Disk space % |',
      '| --- | --- | --- | --- | --- | --- | --- |',
      ...diagnosis.hosts.map((h) => `| ${h.host} | ${h.samples} | ${cell(h.gpuP95)} | ${cell(h.cpuP95)} | ${cell(h.gpuMemoryP95)} | `
        + `${cell(h.memoryP95)} | ${cell(h.diskP95)} |`));
  }
  if (diagnosis.cache) {
    const c = diagnosis.cache;
    lines.push('', '## FSx for Lustre cache', '',
      `${c.fileSystemId}: read ${c.readMBpsMean} MB/s on average, p95 ${c.readMBpsP95} MB/s, of a ${c.baselineMBps} MB/s baseline `
      + `(${round(c.busyShare * 100)} %).`);
  }
  lines.push('', '## Thresholds', '', '| Rule | Value | Source |', '| --- | --- | --- |',
    ...diagnosis.thresholds.map((t) => `| ${t.name} | ${t.value} | ${t.source} |`), '');
  return lines.join('\n');
}

function cell(value: number | undefined): string {
  return value === undefined ? '–' : String(value);
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
