/**
 * How the training step runs: `eager`, one kernel launch at a time from Python (the host often sets
 * the pace), or `compiled`, `torch.compile` with CUDA graphs (train.py's `--compile auto`, on by
 * default on a GPU with PyTorch ≥ 2).
 */
export type TrainingStep = 'eager' | 'compiled';

/**
 * What one GPU consumes training ResNet-50 with mixed precision, in samples/s, by the GPU model's
 * name and how the step runs: what the planner assumes when `samplesPerSecondPerDevice` is not given.
 * Another model consumes more (lighter) or fewer (heavier) samples: give `samplesPerSecondPerDevice` then.
 */
export interface Resnet50Throughput {
  /** A part of `TrainingInstance.gpuModel`. */
  readonly model: string;
  readonly samplesPerSecond: number;
  readonly step: TrainingStep;
  readonly source: string;
}

const RESNET50_AMP: Resnet50Throughput[] = [
  // Measured in this project on one H200 (issue 31, 2026-11): the step timed alone with batches
  // already on the GPU, batch 64. Compiled: torch.compile(mode="reduce-overhead"), bf16.
  { model: 'H200', step: 'compiled', samplesPerSecond: 5531, source: 'measured on one H200: torch.compile reduce-overhead, bf16, batch 64' },
  // The same machine's bench/container-gpu ceiling row: eager, fp16 AMP, channels-last, batch 64
  // (25.3 ms a step alone ≈ 2,530; the bench's ceiling 2,177–2,330, the highest here).
  { model: 'H200', step: 'eager', samplesPerSecond: 2330, source: 'measured on one H200 (eager, batch 64; docs/gpu-loaders.md)' },
  // The lower of two H100 80GB machines (3,284 and 3,695; batch 64, channels-last), measured by
  // bench/container-gpu as the container's Trainer fed batches already on the GPU (2026-11).
  { model: 'H100', step: 'eager', samplesPerSecond: 3284, source: 'measured on an H100 80GB (eager, batch 64; docs/gpu-loaders.md)' },
  // NVIDIA DeepLearningExamples, PyTorch/Classification/ConvNets/resnet50v1.5/README.md, "Training
  // performance: NVIDIA DGX A100 (8x A100 80GB)", 1 GPU, mixed precision (pytorch-21.03 NGC
  // container: before torch.compile, so eager).
  { model: 'A100', step: 'eager', samplesPerSecond: 2470, source: 'NVIDIA DeepLearningExamples, ResNet50 v1.5, 1x A100 80GB, eager' },
  // The same README, "Training performance: NVIDIA DGX-1 32GB (8x V100 32GB)", 1 GPU (1,200 with 16 GB).
  { model: 'V100', step: 'eager', samplesPerSecond: 1156, source: 'NVIDIA DeepLearningExamples, ResNet50 v1.5, 1x V100, eager' },
];

/** A GPU model's figure for the step the container runs, and why another where that one is not known. */
export interface GpuThroughputChoice extends Resnet50Throughput {
  /** Why the figure is not of the step asked for: no such figure was measured for this GPU. */
  readonly fallback?: string;
}

/**
 * ResNet-50 mixed-precision training samples/s of a GPU model with a `step` (compiled: the container's
 * default), else its eager figure with the reason; undefined when the model is not in the table.
 */
export function resnet50SamplesPerSecond(gpuModel: string | undefined, step: TrainingStep = 'compiled'): GpuThroughputChoice | undefined {
  if (gpuModel === undefined) return undefined;
  const rows = RESNET50_AMP.filter((entry) => gpuModel.includes(entry.model));
  const wanted = rows.find((entry) => entry.step === step);
  if (wanted) return wanted;
  const other = rows[0];
  if (other === undefined) return undefined;
  // A compiled step trains faster than an eager one: an eager figure is what the GPU consumes at least.
  return { ...other, fallback: `no ${step} figure measured for the ${other.model}: a ${step} step trains ${step === 'compiled' ? 'faster' : 'slower'}` };
}
