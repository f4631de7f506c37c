import type { ResolvedCluster } from '../../instances/private/cluster-rules';
import { SampleEncoding } from '../dataset-profile';
import type { GpuDecodingAdvice } from '../io-plan';
import { PlannedLoader } from '../io-plan';
import type { DecodingRates } from './decoding-rates';
import { describeCpuDecoding } from './decoding-rates';
import type { ResolvedDataset } from './plan-inputs';
import { formatCount } from './units';

/**
 * Where to decode and augment: the first path whose CPU part keeps up with what each GPU consumes
 * (the CPU workers; the workers decoding and the GPU augmenting; the GPU doing both).
 */
export function adviseGpuDecoding(dataset: ResolvedDataset, cluster: ResolvedCluster, rates: DecodingRates): GpuDecodingAdvice {
  const capacity = Math.round(rates.perProcess);
  const decodeOnly = Math.round(rates.decodeOnlyPerProcess);
  const { demand } = rates;
  const decodes = describeCpuDecoding(rates);
  const advice = (loader: PlannedLoader, reason: string): GpuDecodingAdvice => ({
    advised: loader !== PlannedLoader.CPU, loader, cpuSamplesPerSecondPerProcess: capacity,
    cpuDecodeOnlySamplesPerSecondPerProcess: decodeOnly, ...(demand ? { gpuSamplesPerSecond: demand.samplesPerSecond } : {}), reason,
  });
  if (dataset.sampleEncoding !== SampleEncoding.JPEG) return advice(PlannedLoader.CPU, 'the samples are not JPEG images: nothing to decode on the GPU');
  if (cluster.instance.gpus === 0) {
    return advice(PlannedLoader.CPU, `${cluster.instance.instanceType} has no NVIDIA GPU for DALI's decoder; decode on the CPU`);
  }
  if (demand === undefined) {
    return advice(PlannedLoader.CPU, `${decodes}; give the samples/s each GPU consumes to compare, or watch train:data_wait_fraction`);
  }
  if (demand.samplesPerSecond <= capacity) return advice(PlannedLoader.CPU, `${decodes}, enough for ${demand.description}`);
  if (demand.samplesPerSecond <= decodeOnly) {
    return advice(PlannedLoader.HYBRID, `${decodes}, less than ${demand.description}; decoding alone they make ~${formatCount(decodeOnly)}/s: ` +
      'decode in the workers and crop, resize, flip and normalize each batch on the GPU (train.py --loader hybrid)');
  }
  return advice(PlannedLoader.GPU, `${decodes}, and ~${formatCount(decodeOnly)}/s decoding alone, less than ${demand.description}: decode and ` +
    "augment on the GPU with NVIDIA DALI (device='mixed', TrainingContainer.dali()), or nvJPEG (train.py --loader gpu)");
}
