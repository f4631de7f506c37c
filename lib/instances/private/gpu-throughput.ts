/**
 * What one GPU consumes training ResNet-50 with mixed precision, in samples/s, by the GPU model's
 * name: what the planner assumes when `samplesPerSecondPerDevice` is not given. Another model
 * consumes more (lighter) or fewer (heavier) samples: give `samplesPerSecondPerDevice` then.
 */
interface Resnet50Throughput {
  /** A part of `TrainingInstance.gpuModel`. */
  readonly model: string;
  readonly samplesPerSecond: number;
  readonly source: string;
}

const RESNET50_AMP: Resnet50Throughput[] = [
  // The lower of two H100 80GB machines (3,284 and 3,695; batch 64, channels-last), measured by
  // bench/container-gpu as the container's Trainer fed batches already on the GPU (2026-11).
  { model: 'H100', samplesPerSecond: 3284, source: 'measured by bench/container-gpu (batch 64)' },
  // NVIDIA DeepLearningExamples, PyTorch/Classification/ConvNets/resnet50v1.5/README.md, "Training
  // performance: NVIDIA DGX A100 (8x A100 80GB)", 1 GPU, mixed precision (pytorch-21.03 NGC container).
  { model: 'A100', samplesPerSecond: 2470, source: 'NVIDIA DeepLearningExamples, ResNet50 v1.5, 1x A100 80GB' },
  // The same README, "Training performance: NVIDIA DGX-1 32GB (8x V100 32GB)", 1 GPU (1,200 with 16 GB).
  { model: 'V100', samplesPerSecond: 1156, source: 'NVIDIA DeepLearningExamples, ResNet50 v1.5, 1x V100' },
];

/** ResNet-50 mixed-precision training samples/s of a GPU model, and the figure's source; undefined when not known. */
export function resnet50SamplesPerSecond(gpuModel: string | undefined): Resnet50Throughput | undefined {
  if (gpuModel === undefined) return undefined;
  return RESNET50_AMP.find((entry) => gpuModel.includes(entry.model));
}
