import { SizeRoundingBehavior } from 'aws-cdk-lib';
import type { DataLoaderSizing, DataLoaderSizingOptions } from './data-loader-sizing';
import { DEFAULT_MEMORY_PER_WORKER } from './private/loader-memory';
import { defaultNeuronCores } from './private/neuron-cores';
import { ValidationError } from '../private/errors';

/**
 * Hardware of a SageMaker training instance type, as EC2 `DescribeInstanceTypes` reports it.
 */
export interface TrainingInstanceSpec {
  /** vCPUs (what SageMaker reports as `SM_NUM_CPUS`). */
  readonly vcpus: number;
  /** Memory in GiB. */
  readonly memoryGiB: number;
  /**
   * NVIDIA GPUs.
   *
   * @default 0
   */
  readonly gpus?: number;
  /**
   * GPU model, e.g. `NVIDIA A100`.
   *
   * @default - no GPU
   */
  readonly gpuModel?: string;
  /**
   * Memory of one GPU in GiB.
   *
   * @default - no GPU
   */
  readonly gpuMemoryGiB?: number;
  /**
   * AWS Trainium devices.
   *
   * @default 0
   */
  readonly trainiumDevices?: number;
  /**
   * NeuronCores of the Trainium devices as the Neuron runtime exposes them (logical NeuronCores),
   * one training process each by default.
   *
   * @default - Neuron's defaults: 2 per Trainium device on trn1 and trn1n, 4 per Trainium2 device
   * on trn2 (8 physical cores paired by LNC=2); one per device on other families; 0 without Trainium
   * @see https://awsdocs-neuron.readthedocs-hosted.com/en/latest/frameworks/torch/torch-neuronx/programming-guide/training/pytorch-neuron-programming-guide.html
   */
  readonly neuronCores?: number;
  /**
   * Local NVMe instance storage in GB. SageMaker puts File-mode data, checkpoints and outputs
   * there and ignores `VolumeSizeInGB`.
   *
   * @default - none: the instance uses an EBS volume
   */
  readonly localNvmeGB?: number;
  /**
   * Baseline network bandwidth in Gbit/s.
   *
   * @default - unknown
   */
  readonly networkGbps?: number;
  /**
   * Elastic Fabric Adapter interfaces.
   *
   * @default 0
   */
  readonly efaInterfaces?: number;
}

const INSTANCE_TYPE_PATTERN = /^ml\.[a-z0-9-]+\.[a-z0-9]+$/;

/**
 * A SageMaker training instance type with the hardware facts the library sizes things by.
 *
 * The catalog covers SageMaker's GPU and Trainium training instance types;
 * use `TrainingInstance.of()` for any other type.
 */
export class TrainingInstance {
  private static readonly known = new Map<string, TrainingInstance>();

  /**
   * Any instance type, with its hardware described by you.
   *
   * @param instanceType the SageMaker name, e.g. `ml.p5e.48xlarge`
   */
  public static of(instanceType: string, spec: TrainingInstanceSpec): TrainingInstance {
    return new TrainingInstance(instanceType, spec);
  }

  /**
   * A catalogued instance type by its SageMaker name.
   *
   * @throws when the type is not in the catalog; use `TrainingInstance.of()` for those
   */
  public static fromName(instanceType: string): TrainingInstance {
    const found = TrainingInstance.known.get(instanceType);
    if (!found) {
      throw new ValidationError('UnknownInstanceType',
        `instanceType '${instanceType}' is not in the catalog; use TrainingInstance.of('${instanceType}', {...}) ` +
        `to describe it, or one of: ${TrainingInstance.all().map((i) => i.instanceType).join(', ')}`);
    }
    return found;
  }

  /** Every catalogued instance type, in catalog order. */
  public static all(): TrainingInstance[] {
    return [...TrainingInstance.known.values()];
  }

  private static catalog(instanceType: string, spec: TrainingInstanceSpec): TrainingInstance {
    const instance = new TrainingInstance(instanceType, spec);
    TrainingInstance.known.set(instanceType, instance);
    return instance;
  }

  // Generated from test/fixtures/instances/instances.json (EC2 DescribeInstanceTypes via karpenter's
  // instance-type docs; sources in the README there); test/instances/training-instance.test.ts checks it against that file.
  // The Trainium types' NeuronCores (the processes they run) are Neuron's defaults, private/neuron-cores.ts:
  // 32 on trn1.32xlarge and trn1n.32xlarge, 64 on trn2.48xlarge, 2 on trn1.2xlarge
  // (https://awsdocs-neuron.readthedocs-hosted.com/en/latest/training/best-practices.html, and the PyTorch NeuronX
  // developer guide linked there).
  // @catalog-begin
  /** ml.p3.2xlarge: 8 vCPUs, 61 GiB, 1 × NVIDIA Tesla V100, EBS only. */
  public static readonly P3_2XLARGE = TrainingInstance.catalog('ml.p3.2xlarge', { vcpus: 8, memoryGiB: 61, gpus: 1, gpuModel: 'NVIDIA Tesla V100', gpuMemoryGiB: 16, networkGbps: 2.5 });
  /** ml.p3.8xlarge: 32 vCPUs, 244 GiB, 4 × NVIDIA Tesla V100, EBS only. */
  public static readonly P3_8XLARGE = TrainingInstance.catalog('ml.p3.8xlarge', { vcpus: 32, memoryGiB: 244, gpus: 4, gpuModel: 'NVIDIA Tesla V100', gpuMemoryGiB: 16, networkGbps: 10 });
  /** ml.p3.16xlarge: 64 vCPUs, 488 GiB, 8 × NVIDIA Tesla V100, EBS only. */
  public static readonly P3_16XLARGE = TrainingInstance.catalog('ml.p3.16xlarge', { vcpus: 64, memoryGiB: 488, gpus: 8, gpuModel: 'NVIDIA Tesla V100', gpuMemoryGiB: 16, networkGbps: 25 });
  /** ml.p3dn.24xlarge: 96 vCPUs, 768 GiB, 8 × NVIDIA Tesla V100, 1800 GB NVMe. */
  public static readonly P3DN_24XLARGE = TrainingInstance.catalog('ml.p3dn.24xlarge', { vcpus: 96, memoryGiB: 768, gpus: 8, gpuModel: 'NVIDIA Tesla V100', gpuMemoryGiB: 32, localNvmeGB: 1800, networkGbps: 100, efaInterfaces: 1 });
  /** ml.p4d.24xlarge: 96 vCPUs, 1152 GiB, 8 × NVIDIA A100, 8000 GB NVMe. */
  public static readonly P4D_24XLARGE = TrainingInstance.catalog('ml.p4d.24xlarge', { vcpus: 96, memoryGiB: 1152, gpus: 8, gpuModel: 'NVIDIA A100', gpuMemoryGiB: 40, localNvmeGB: 8000, networkGbps: 400, efaInterfaces: 4 });
  /** ml.p4de.24xlarge: 96 vCPUs, 1152 GiB, 8 × NVIDIA A100, 8000 GB NVMe. */
  public static readonly P4DE_24XLARGE = TrainingInstance.catalog('ml.p4de.24xlarge', { vcpus: 96, memoryGiB: 1152, gpus: 8, gpuModel: 'NVIDIA A100', gpuMemoryGiB: 80, localNvmeGB: 8000, networkGbps: 400, efaInterfaces: 4 });
  /** ml.p5.4xlarge: 16 vCPUs, 256 GiB, 1 × NVIDIA H100, 3800 GB NVMe. */
  public static readonly P5_4XLARGE = TrainingInstance.catalog('ml.p5.4xlarge', { vcpus: 16, memoryGiB: 256, gpus: 1, gpuModel: 'NVIDIA H100', gpuMemoryGiB: 80, localNvmeGB: 3800, networkGbps: 100, efaInterfaces: 1 });
  /** ml.p5.48xlarge: 192 vCPUs, 2048 GiB, 8 × NVIDIA H100, 30400 GB NVMe. */
  public static readonly P5_48XLARGE = TrainingInstance.catalog('ml.p5.48xlarge', { vcpus: 192, memoryGiB: 2048, gpus: 8, gpuModel: 'NVIDIA H100', gpuMemoryGiB: 80, localNvmeGB: 30400, networkGbps: 3200, efaInterfaces: 32 });
  /** ml.p5e.48xlarge: 192 vCPUs, 2048 GiB, 8 × NVIDIA H200, 30400 GB NVMe. */
  public static readonly P5E_48XLARGE = TrainingInstance.catalog('ml.p5e.48xlarge', { vcpus: 192, memoryGiB: 2048, gpus: 8, gpuModel: 'NVIDIA H200', gpuMemoryGiB: 141, localNvmeGB: 30400, networkGbps: 3200, efaInterfaces: 32 });
  /** ml.p5en.48xlarge: 192 vCPUs, 2048 GiB, 8 × NVIDIA H200, 30400 GB NVMe. */
  public static readonly P5EN_48XLARGE = TrainingInstance.catalog('ml.p5en.48xlarge', { vcpus: 192, memoryGiB: 2048, gpus: 8, gpuModel: 'NVIDIA H200', gpuMemoryGiB: 141, localNvmeGB: 30400, networkGbps: 3200, efaInterfaces: 16 });
  /** ml.g4dn.xlarge: 4 vCPUs, 16 GiB, 1 × NVIDIA T4 Tensor Core, 125 GB NVMe. */
  public static readonly G4DN_XLARGE = TrainingInstance.catalog('ml.g4dn.xlarge', { vcpus: 4, memoryGiB: 16, gpus: 1, gpuModel: 'NVIDIA T4 Tensor Core', gpuMemoryGiB: 16, localNvmeGB: 125, networkGbps: 5 });
  /** ml.g4dn.2xlarge: 8 vCPUs, 32 GiB, 1 × NVIDIA T4 Tensor Core, 225 GB NVMe. */
  public static readonly G4DN_2XLARGE = TrainingInstance.catalog('ml.g4dn.2xlarge', { vcpus: 8, memoryGiB: 32, gpus: 1, gpuModel: 'NVIDIA T4 Tensor Core', gpuMemoryGiB: 16, localNvmeGB: 225, networkGbps: 10 });
  /** ml.g4dn.4xlarge: 16 vCPUs, 64 GiB, 1 × NVIDIA T4 Tensor Core, 225 GB NVMe. */
  public static readonly G4DN_4XLARGE = TrainingInstance.catalog('ml.g4dn.4xlarge', { vcpus: 16, memoryGiB: 64, gpus: 1, gpuModel: 'NVIDIA T4 Tensor Core', gpuMemoryGiB: 16, localNvmeGB: 225, networkGbps: 20 });
  /** ml.g4dn.8xlarge: 32 vCPUs, 128 GiB, 1 × NVIDIA T4 Tensor Core, 900 GB NVMe. */
  public static readonly G4DN_8XLARGE = TrainingInstance.catalog('ml.g4dn.8xlarge', { vcpus: 32, memoryGiB: 128, gpus: 1, gpuModel: 'NVIDIA T4 Tensor Core', gpuMemoryGiB: 16, localNvmeGB: 900, networkGbps: 50, efaInterfaces: 1 });
  /** ml.g4dn.12xlarge: 48 vCPUs, 192 GiB, 4 × NVIDIA T4 Tensor Core, 900 GB NVMe. */
  public static readonly G4DN_12XLARGE = TrainingInstance.catalog('ml.g4dn.12xlarge', { vcpus: 48, memoryGiB: 192, gpus: 4, gpuModel: 'NVIDIA T4 Tensor Core', gpuMemoryGiB: 16, localNvmeGB: 900, networkGbps: 50, efaInterfaces: 1 });
  /** ml.g4dn.16xlarge: 64 vCPUs, 256 GiB, 1 × NVIDIA T4 Tensor Core, 900 GB NVMe. */
  public static readonly G4DN_16XLARGE = TrainingInstance.catalog('ml.g4dn.16xlarge', { vcpus: 64, memoryGiB: 256, gpus: 1, gpuModel: 'NVIDIA T4 Tensor Core', gpuMemoryGiB: 16, localNvmeGB: 900, networkGbps: 50, efaInterfaces: 1 });
  /** ml.g5.xlarge: 4 vCPUs, 16 GiB, 1 × NVIDIA A10G, 250 GB NVMe. */
  public static readonly G5_XLARGE = TrainingInstance.catalog('ml.g5.xlarge', { vcpus: 4, memoryGiB: 16, gpus: 1, gpuModel: 'NVIDIA A10G', gpuMemoryGiB: 22.3515625, localNvmeGB: 250, networkGbps: 2.5 });
  /** ml.g5.2xlarge: 8 vCPUs, 32 GiB, 1 × NVIDIA A10G, 450 GB NVMe. */
  public static readonly G5_2XLARGE = TrainingInstance.catalog('ml.g5.2xlarge', { vcpus: 8, memoryGiB: 32, gpus: 1, gpuModel: 'NVIDIA A10G', gpuMemoryGiB: 22.3515625, localNvmeGB: 450, networkGbps: 5 });
  /** ml.g5.4xlarge: 16 vCPUs, 64 GiB, 1 × NVIDIA A10G, 600 GB NVMe. */
  public static readonly G5_4XLARGE = TrainingInstance.catalog('ml.g5.4xlarge', { vcpus: 16, memoryGiB: 64, gpus: 1, gpuModel: 'NVIDIA A10G', gpuMemoryGiB: 22.3515625, localNvmeGB: 600, networkGbps: 10 });
  /** ml.g5.8xlarge: 32 vCPUs, 128 GiB, 1 × NVIDIA A10G, 900 GB NVMe. */
  public static readonly G5_8XLARGE = TrainingInstance.catalog('ml.g5.8xlarge', { vcpus: 32, memoryGiB: 128, gpus: 1, gpuModel: 'NVIDIA A10G', gpuMemoryGiB: 22.3515625, localNvmeGB: 900, networkGbps: 25, efaInterfaces: 1 });
  /** ml.g5.12xlarge: 48 vCPUs, 192 GiB, 4 × NVIDIA A10G, 3800 GB NVMe. */
  public static readonly G5_12XLARGE = TrainingInstance.catalog('ml.g5.12xlarge', { vcpus: 48, memoryGiB: 192, gpus: 4, gpuModel: 'NVIDIA A10G', gpuMemoryGiB: 22.3515625, localNvmeGB: 3800, networkGbps: 40, efaInterfaces: 1 });
  /** ml.g5.16xlarge: 64 vCPUs, 256 GiB, 1 × NVIDIA A10G, 1900 GB NVMe. */
  public static readonly G5_16XLARGE = TrainingInstance.catalog('ml.g5.16xlarge', { vcpus: 64, memoryGiB: 256, gpus: 1, gpuModel: 'NVIDIA A10G', gpuMemoryGiB: 22.3515625, localNvmeGB: 1900, networkGbps: 25, efaInterfaces: 1 });
  /** ml.g5.24xlarge: 96 vCPUs, 384 GiB, 4 × NVIDIA A10G, 3800 GB NVMe. */
  public static readonly G5_24XLARGE = TrainingInstance.catalog('ml.g5.24xlarge', { vcpus: 96, memoryGiB: 384, gpus: 4, gpuModel: 'NVIDIA A10G', gpuMemoryGiB: 22.3515625, localNvmeGB: 3800, networkGbps: 50, efaInterfaces: 1 });
  /** ml.g5.48xlarge: 192 vCPUs, 768 GiB, 8 × NVIDIA A10G, 7600 GB NVMe. */
  public static readonly G5_48XLARGE = TrainingInstance.catalog('ml.g5.48xlarge', { vcpus: 192, memoryGiB: 768, gpus: 8, gpuModel: 'NVIDIA A10G', gpuMemoryGiB: 22.3515625, localNvmeGB: 7600, networkGbps: 100, efaInterfaces: 1 });
  /** ml.g6.xlarge: 4 vCPUs, 16 GiB, 1 × NVIDIA L4, 250 GB NVMe. */
  public static readonly G6_XLARGE = TrainingInstance.catalog('ml.g6.xlarge', { vcpus: 4, memoryGiB: 16, gpus: 1, gpuModel: 'NVIDIA L4', gpuMemoryGiB: 22.3515625, localNvmeGB: 250, networkGbps: 2.5 });
  /** ml.g6.2xlarge: 8 vCPUs, 32 GiB, 1 × NVIDIA L4, 450 GB NVMe. */
  public static readonly G6_2XLARGE = TrainingInstance.catalog('ml.g6.2xlarge', { vcpus: 8, memoryGiB: 32, gpus: 1, gpuModel: 'NVIDIA L4', gpuMemoryGiB: 22.3515625, localNvmeGB: 450, networkGbps: 5 });
  /** ml.g6.4xlarge: 16 vCPUs, 64 GiB, 1 × NVIDIA L4, 600 GB NVMe. */
  public static readonly G6_4XLARGE = TrainingInstance.catalog('ml.g6.4xlarge', { vcpus: 16, memoryGiB: 64, gpus: 1, gpuModel: 'NVIDIA L4', gpuMemoryGiB: 22.3515625, localNvmeGB: 600, networkGbps: 10 });
  /** ml.g6.8xlarge: 32 vCPUs, 128 GiB, 1 × NVIDIA L4, 900 GB NVMe. */
  public static readonly G6_8XLARGE = TrainingInstance.catalog('ml.g6.8xlarge', { vcpus: 32, memoryGiB: 128, gpus: 1, gpuModel: 'NVIDIA L4', gpuMemoryGiB: 22.3515625, localNvmeGB: 900, networkGbps: 25, efaInterfaces: 1 });
  /** ml.g6.12xlarge: 48 vCPUs, 192 GiB, 4 × NVIDIA L4, 3760 GB NVMe. */
  public static readonly G6_12XLARGE = TrainingInstance.catalog('ml.g6.12xlarge', { vcpus: 48, memoryGiB: 192, gpus: 4, gpuModel: 'NVIDIA L4', gpuMemoryGiB: 22.3515625, localNvmeGB: 3760, networkGbps: 40, efaInterfaces: 1 });
  /** ml.g6.16xlarge: 64 vCPUs, 256 GiB, 1 × NVIDIA L4, 1880 GB NVMe. */
  public static readonly G6_16XLARGE = TrainingInstance.catalog('ml.g6.16xlarge', { vcpus: 64, memoryGiB: 256, gpus: 1, gpuModel: 'NVIDIA L4', gpuMemoryGiB: 22.3515625, localNvmeGB: 1880, networkGbps: 25, efaInterfaces: 1 });
  /** ml.g6.24xlarge: 96 vCPUs, 384 GiB, 4 × NVIDIA L4, 3760 GB NVMe. */
  public static readonly G6_24XLARGE = TrainingInstance.catalog('ml.g6.24xlarge', { vcpus: 96, memoryGiB: 384, gpus: 4, gpuModel: 'NVIDIA L4', gpuMemoryGiB: 22.3515625, localNvmeGB: 3760, networkGbps: 50, efaInterfaces: 1 });
  /** ml.g6.48xlarge: 192 vCPUs, 768 GiB, 8 × NVIDIA L4, 7520 GB NVMe. */
  public static readonly G6_48XLARGE = TrainingInstance.catalog('ml.g6.48xlarge', { vcpus: 192, memoryGiB: 768, gpus: 8, gpuModel: 'NVIDIA L4', gpuMemoryGiB: 22.3515625, localNvmeGB: 7520, networkGbps: 100, efaInterfaces: 1 });
  /** ml.g6e.xlarge: 4 vCPUs, 32 GiB, 1 × NVIDIA L40S, 250 GB NVMe. */
  public static readonly G6E_XLARGE = TrainingInstance.catalog('ml.g6e.xlarge', { vcpus: 4, memoryGiB: 32, gpus: 1, gpuModel: 'NVIDIA L40S', gpuMemoryGiB: 44.703125, localNvmeGB: 250, networkGbps: 2.5 });
  /** ml.g6e.2xlarge: 8 vCPUs, 64 GiB, 1 × NVIDIA L40S, 450 GB NVMe. */
  public static readonly G6E_2XLARGE = TrainingInstance.catalog('ml.g6e.2xlarge', { vcpus: 8, memoryGiB: 64, gpus: 1, gpuModel: 'NVIDIA L40S', gpuMemoryGiB: 44.703125, localNvmeGB: 450, networkGbps: 5 });
  /** ml.g6e.4xlarge: 16 vCPUs, 128 GiB, 1 × NVIDIA L40S, 600 GB NVMe. */
  public static readonly G6E_4XLARGE = TrainingInstance.catalog('ml.g6e.4xlarge', { vcpus: 16, memoryGiB: 128, gpus: 1, gpuModel: 'NVIDIA L40S', gpuMemoryGiB: 44.703125, localNvmeGB: 600, networkGbps: 20 });
  /** ml.g6e.8xlarge: 32 vCPUs, 256 GiB, 1 × NVIDIA L40S, 900 GB NVMe. */
  public static readonly G6E_8XLARGE = TrainingInstance.catalog('ml.g6e.8xlarge', { vcpus: 32, memoryGiB: 256, gpus: 1, gpuModel: 'NVIDIA L40S', gpuMemoryGiB: 44.703125, localNvmeGB: 900, networkGbps: 25, efaInterfaces: 1 });
  /** ml.g6e.12xlarge: 48 vCPUs, 384 GiB, 4 × NVIDIA L40S, 3800 GB NVMe. */
  public static readonly G6E_12XLARGE = TrainingInstance.catalog('ml.g6e.12xlarge', { vcpus: 48, memoryGiB: 384, gpus: 4, gpuModel: 'NVIDIA L40S', gpuMemoryGiB: 44.703125, localNvmeGB: 3800, networkGbps: 100, efaInterfaces: 1 });
  /** ml.g6e.16xlarge: 64 vCPUs, 512 GiB, 1 × NVIDIA L40S, 1900 GB NVMe. */
  public static readonly G6E_16XLARGE = TrainingInstance.catalog('ml.g6e.16xlarge', { vcpus: 64, memoryGiB: 512, gpus: 1, gpuModel: 'NVIDIA L40S', gpuMemoryGiB: 44.703125, localNvmeGB: 1900, networkGbps: 35, efaInterfaces: 1 });
  /** ml.g6e.24xlarge: 96 vCPUs, 768 GiB, 4 × NVIDIA L40S, 3800 GB NVMe. */
  public static readonly G6E_24XLARGE = TrainingInstance.catalog('ml.g6e.24xlarge', { vcpus: 96, memoryGiB: 768, gpus: 4, gpuModel: 'NVIDIA L40S', gpuMemoryGiB: 44.703125, localNvmeGB: 3800, networkGbps: 200, efaInterfaces: 2 });
  /** ml.g6e.48xlarge: 192 vCPUs, 1536 GiB, 8 × NVIDIA L40S, 7600 GB NVMe. */
  public static readonly G6E_48XLARGE = TrainingInstance.catalog('ml.g6e.48xlarge', { vcpus: 192, memoryGiB: 1536, gpus: 8, gpuModel: 'NVIDIA L40S', gpuMemoryGiB: 44.703125, localNvmeGB: 7600, networkGbps: 400, efaInterfaces: 4 });
  /** ml.trn1.2xlarge: 8 vCPUs, 32 GiB, 1 × AWS Trainium, 474 GB NVMe. */
  public static readonly TRN1_2XLARGE = TrainingInstance.catalog('ml.trn1.2xlarge', { vcpus: 8, memoryGiB: 32, trainiumDevices: 1, localNvmeGB: 474, networkGbps: 3.125 });
  /** ml.trn1.32xlarge: 128 vCPUs, 512 GiB, 16 × AWS Trainium, 7600 GB NVMe. */
  public static readonly TRN1_32XLARGE = TrainingInstance.catalog('ml.trn1.32xlarge', { vcpus: 128, memoryGiB: 512, trainiumDevices: 16, localNvmeGB: 7600, networkGbps: 800, efaInterfaces: 8 });
  /** ml.trn1n.32xlarge: 128 vCPUs, 512 GiB, 16 × AWS Trainium, 7600 GB NVMe. */
  public static readonly TRN1N_32XLARGE = TrainingInstance.catalog('ml.trn1n.32xlarge', { vcpus: 128, memoryGiB: 512, trainiumDevices: 16, localNvmeGB: 7600, networkGbps: 1600, efaInterfaces: 16 });
  /** ml.trn2.48xlarge: 192 vCPUs, 2048 GiB, 16 × AWS Trainium, 7600 GB NVMe. */
  public static readonly TRN2_48XLARGE = TrainingInstance.catalog('ml.trn2.48xlarge', { vcpus: 192, memoryGiB: 2048, trainiumDevices: 16, localNvmeGB: 7600, networkGbps: 3200, efaInterfaces: 16 });
  // @catalog-end

  /** The SageMaker instance type, e.g. `ml.p4d.24xlarge`. */
  public readonly instanceType: string;
  /** vCPUs. */
  public readonly vcpus: number;
  /** Memory in GiB. */
  public readonly memoryGiB: number;
  /** NVIDIA GPUs (0 for Trainium or CPU types). */
  public readonly gpus: number;
  /** GPU model, when the instance has GPUs. */
  public readonly gpuModel?: string;
  /** Memory of one GPU in GiB, when the instance has GPUs. */
  public readonly gpuMemoryGiB?: number;
  /** AWS Trainium devices (0 for GPU types). */
  public readonly trainiumDevices: number;
  /** NeuronCores of the Trainium devices, as Neuron exposes them by default (0 for GPU types). */
  public readonly neuronCores: number;
  /** Local NVMe storage in GB; undefined when the instance uses EBS. */
  public readonly localNvmeGB?: number;
  /** Baseline network bandwidth in Gbit/s, when known. */
  public readonly networkGbps?: number;
  /** Elastic Fabric Adapter interfaces. */
  public readonly efaInterfaces: number;

  private constructor(instanceType: string, spec: TrainingInstanceSpec) {
    validateSpec(instanceType, spec);
    this.instanceType = instanceType;
    this.vcpus = spec.vcpus;
    this.memoryGiB = spec.memoryGiB;
    this.gpus = spec.gpus ?? 0;
    this.gpuModel = spec.gpuModel;
    this.gpuMemoryGiB = spec.gpuMemoryGiB;
    this.trainiumDevices = spec.trainiumDevices ?? 0;
    this.neuronCores = spec.neuronCores ?? defaultNeuronCores(instanceType, this.trainiumDevices);
    this.localNvmeGB = spec.localNvmeGB;
    this.networkGbps = spec.networkGbps;
    this.efaInterfaces = spec.efaInterfaces ?? 0;
  }

  /** GPUs plus Trainium devices. */
  public get acceleratorCount(): number {
    return this.gpus + this.trainiumDevices;
  }

  /**
   * The training processes one instance runs by default: one per GPU, or one per NeuronCore on
   * Trainium (Neuron's default), at least 1.
   */
  public get defaultProcessesPerInstance(): number {
    return Math.max(1, this.gpus > 0 ? this.gpus : this.neuronCores);
  }

  /**
   * True when the instance has local NVMe storage. SageMaker then provisions no EBS volume,
   * ignores `VolumeSizeInGB` and rejects `VolumeKmsKeyId` (the NVMe is hardware-encrypted).
   */
  public get hasLocalNvme(): boolean {
    return this.localNvmeGB !== undefined;
  }

  /** Local NVMe capacity in bytes (0 when the instance uses EBS). */
  public get localNvmeBytes(): number {
    return (this.localNvmeGB ?? 0) * 1e9;
  }

  /**
   * Data-loader workers and DALI threads for each training process.
   *
   * Rule: workers = vCPUs per process − 1 (the process itself needs a core), at least 1,
   * capped so that workers × `memoryPerWorker` fit in the RAM per process. 8 GPUs on 96 vCPUs
   * give 11 workers per rank, not 95: each worker is a process, and over-subscribing the cores
   * slows every one of them (PyTorch warns on "excessive worker creation", pytorch#46867;
   * SageMaker Debugger's Dataloader rule flags totals outside 70–200 % of the cores).
   * DALI threads follow the same CPU rule; they share the process's memory, so no memory cap.
   */
  public sizeDataLoaders(options: DataLoaderSizingOptions = {}): DataLoaderSizing {
    const processes = options.processesPerInstance ?? this.defaultProcessesPerInstance;
    if (!Number.isInteger(processes) || processes < 1 || processes > this.vcpus) {
      throw new ValidationError('InvalidProcessesPerInstance',
        `processesPerInstance must be an integer between 1 and the ${this.vcpus} vCPUs of ${this.instanceType}, got ${processes}`);
    }
    const memoryPerWorker = options.memoryPerWorker ?? DEFAULT_MEMORY_PER_WORKER;
    // Not a whole number of MiB for sizes given in bytes or KiB (Size.bytes(1e9)): keep the fraction.
    const memoryPerWorkerMiB = memoryPerWorker.toMebibytes({ rounding: SizeRoundingBehavior.NONE });
    const memoryPerWorkerGiB = memoryPerWorkerMiB / 1024;
    if (!(memoryPerWorkerGiB > 0)) {
      throw new ValidationError('InvalidMemoryPerWorker',
        `memoryPerWorker must be more than 0, got ${memoryPerWorkerMiB} MiB`);
    }
    const vcpusPerProcess = Math.floor(this.vcpus / processes);
    const byCpu = Math.max(1, vcpusPerProcess - 1);
    const byMemory = Math.max(1, Math.floor(this.memoryGiB / processes / memoryPerWorkerGiB));
    return {
      processesPerInstance: processes,
      vcpusPerProcess,
      loaderWorkers: Math.min(byCpu, byMemory),
      daliThreads: byCpu,
      limitedByMemory: byMemory < byCpu,
    };
  }

  /** The instance type name. */
  public toString(): string {
    return this.instanceType;
  }
}

function validateSpec(instanceType: string, spec: TrainingInstanceSpec): void {
  if (!INSTANCE_TYPE_PATTERN.test(instanceType)) {
    throw new ValidationError('InvalidInstanceType',
      `instanceType must look like 'ml.<family>.<size>' (e.g. 'ml.p4d.24xlarge'), got '${instanceType}'`);
  }
  const counts: Array<[string, number | undefined]> = [
    ['vcpus', spec.vcpus], ['gpus', spec.gpus], ['trainiumDevices', spec.trainiumDevices], ['neuronCores', spec.neuronCores],
    ['efaInterfaces', spec.efaInterfaces],
  ];
  for (const [name, value] of counts) {
    if (value !== undefined && (!Number.isInteger(value) || value < (name === 'vcpus' ? 1 : 0))) {
      throw new ValidationError('InvalidInstanceSpec',
        `${instanceType}: ${name} must be a whole number${name === 'vcpus' ? ' of at least 1' : ' ≥ 0'}, got ${value}`);
    }
  }
  const sizes: Array<[string, number | undefined]> = [
    ['memoryGiB', spec.memoryGiB], ['gpuMemoryGiB', spec.gpuMemoryGiB], ['localNvmeGB', spec.localNvmeGB], ['networkGbps', spec.networkGbps],
  ];
  for (const [name, value] of sizes) {
    if (value !== undefined && !(value > 0)) {
      throw new ValidationError('InvalidInstanceSpec', `${instanceType}: ${name} must be more than 0, got ${value}`);
    }
  }
}
