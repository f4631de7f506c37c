import type { ResolvedCluster } from '../../instances/private/cluster-rules';
import { SampleEncoding } from '../dataset-profile';
import type { GpuDecodingAdvice } from '../io-plan';
import { PlannedLoader } from '../io-plan';
import type { DecodingRates } from './decoding-rates';
import { describeCpuDecoding } from './decoding-rates';
import type { ResolvedDataset } from './plan-inputs';

/**
 * Where to decode and augment: the CPU workers where they keep up with what each GPU consumes, else
 * the GPU. Never `--loader hybrid` (the workers decode, the GPU augments): its workers ship each batch
 * decoded at full size through shared memory, and it measured slowest or second slowest at 4, 8 and
 * 16 vCPUs on an H200 (docs/gpu-loaders.md); train.py keeps it only for comparison, deprecated.
 */
export function adviseGpuDecoding(dataset: ResolvedDataset, cluster: ResolvedCluster, rates: DecodingRates): GpuDecodingAdvice {
  const capacity = Math.round(rates.perProcess);
  const { demand } = rates;
  const decodes = describeCpuDecoding(rates);
  const advice = (loader: PlannedLoader, reason: string): GpuDecodingAdvice => ({
    advised: loader !== PlannedLoader.CPU, loader, cpuSamplesPerSecondPerProcess: capacity, ...(demand ? { gpuSamplesPerSecond: demand.samplesPerSecond } : {}), reason,
  });
  if (dataset.sampleEncoding !== SampleEncoding.JPEG) return advice(PlannedLoader.CPU, 'the samples are not JPEG images: nothing to decode on the GPU');
  if (cluster.instance.gpus === 0) {
    return advice(PlannedLoader.CPU, `${cluster.instance.instanceType} has no NVIDIA GPU for DALI's decoder; decode on the CPU`);
  }
  if (demand === undefined) {
    return advice(PlannedLoader.CPU, `${decodes}; give the samples/s each GPU consumes to compare, or watch train:data_wait_fraction`);
  }
  if (demand.samplesPerSecond <= capacity) return advice(PlannedLoader.CPU, `${decodes}, enough for ${demand.description}`);
  return advice(PlannedLoader.GPU, `${decodes}, less than ${demand.description}: decode and ` +
    "augment on the GPU with NVIDIA DALI (device='mixed', TrainingContainer.dali()), or nvJPEG (train.py --loader gpu)");
}
