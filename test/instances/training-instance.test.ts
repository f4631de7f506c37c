import * as fs from 'fs';
import * as path from 'path';
import { Size } from 'aws-cdk-lib';
import type { DataLoaderSizing, DataLoaderSizingOptions } from '../../lib/instances/data-loader-sizing';
import type { TrainingInstanceSpec } from '../../lib/instances/training-instance';
import { TrainingInstance } from '../../lib/instances/training-instance';

/** One entry of test/fixtures/instances/instances.json (sources: the README there); counts it could not find are null. */
interface ReferenceInstance {
  readonly type: string;
  readonly vcpu: number;
  readonly memGiB: number;
  readonly gpus: number | null;
  readonly gpuModelFull?: string;
  readonly gpuMemGiBPerGpu: number | null;
  readonly neuron: string | null;
  readonly localNvmeGB: number | null;
  readonly networkGbps: number | null;
  readonly efa: string | null;
}

const REFERENCE_FILE = path.resolve(__dirname, '..', 'fixtures', 'instances', 'instances.json');
const reference: Record<string, ReferenceInstance> = JSON.parse(fs.readFileSync(REFERENCE_FILE, 'utf-8'));

/** A count the JSON writes as a string ("4") or null (none). */
function count(value: string | number | null): number {
  return value === null ? 0 : Number(value);
}

/** What the reference says the class must report, with its null conventions applied. */
function expectedHardware(entry: ReferenceInstance) {
  return {
    instanceType: entry.type,
    vcpus: entry.vcpu,
    memoryGiB: entry.memGiB,
    gpus: count(entry.gpus),
    gpuModel: entry.gpuModelFull,
    gpuMemoryGiB: entry.gpuMemGiBPerGpu ?? undefined,
    trainiumDevices: count(entry.neuron),
    localNvmeGB: entry.localNvmeGB ?? undefined,
    networkGbps: entry.networkGbps ?? undefined,
    efaInterfaces: count(entry.efa),
  };
}

function actualHardware(instance: TrainingInstance) {
  return {
    instanceType: instance.instanceType,
    vcpus: instance.vcpus,
    memoryGiB: instance.memoryGiB,
    gpus: instance.gpus,
    gpuModel: instance.gpuModel,
    gpuMemoryGiB: instance.gpuMemoryGiB,
    trainiumDevices: instance.trainiumDevices,
    localNvmeGB: instance.localNvmeGB,
    networkGbps: instance.networkGbps,
    efaInterfaces: instance.efaInterfaces,
  };
}

const CUSTOM_SPEC: TrainingInstanceSpec = { vcpus: 8, memoryGiB: 32, gpus: 1 };

describe('TrainingInstance', () => {
  describe('catalog', () => {
    test('lists exactly the instance types of instances.json', () => {
      // GIVEN
      const referenceTypes = Object.keys(reference);

      // WHEN
      const catalogTypes = TrainingInstance.all().map((instance) => instance.instanceType);

      // THEN
      expect(referenceTypes.length).toBeGreaterThan(0);
      expect([...catalogTypes].sort()).toEqual([...referenceTypes].sort());
      expect(new Set(catalogTypes).size).toBe(catalogTypes.length);
    });

    test.each(Object.values(reference))('$type has the hardware instances.json reports', (entry) => {
      // GIVEN
      const expected = expectedHardware(entry);

      // WHEN
      const instance = TrainingInstance.fromName(entry.type);

      // THEN
      expect(actualHardware(instance)).toEqual(expected);
    });

    test('fromName returns the catalog constant', () => {
      // WHEN
      const instance = TrainingInstance.fromName('ml.p4d.24xlarge');

      // THEN
      expect(instance).toBe(TrainingInstance.P4D_24XLARGE);
      expect(instance.toString()).toBe('ml.p4d.24xlarge');
    });

    test('fromName of a type not in the catalog throws and points to of()', () => {
      expect(() => TrainingInstance.fromName('ml.p6-b200.48xlarge')).toThrow(/UnknownInstanceType.*TrainingInstance\.of\('ml\.p6-b200\.48xlarge'/);
    });

    test('a type described with of() is not added to the catalog', () => {
      // GIVEN
      const before = TrainingInstance.all().length;

      // WHEN
      TrainingInstance.of('ml.x.custom', CUSTOM_SPEC);

      // THEN
      expect(TrainingInstance.all()).toHaveLength(before);
      expect(() => TrainingInstance.fromName('ml.x.custom')).toThrow(/UnknownInstanceType/);
    });
  });

  describe('of', () => {
    test('keeps the spec it is given and defaults the counts to 0', () => {
      // WHEN
      const instance = TrainingInstance.of('ml.p5e.48xlarge', { vcpus: 192, memoryGiB: 2048 });

      // THEN
      expect(actualHardware(instance)).toEqual({
        instanceType: 'ml.p5e.48xlarge', vcpus: 192, memoryGiB: 2048, gpus: 0, trainiumDevices: 0, efaInterfaces: 0,
      });
      expect(instance.acceleratorCount).toBe(0);
    });

    test.each(['p4d.24xlarge', 'ml.P4D.x', '', 'ml.p4d', 'ml.p4d.24xlarge '])('rejects the instance type %j', (instanceType) => {
      expect(() => TrainingInstance.of(instanceType, CUSTOM_SPEC)).toThrow(/InvalidInstanceType/);
    });

    test.each<[string, Partial<TrainingInstanceSpec>]>([
      ['vcpus 0', { vcpus: 0 }],
      ['vcpus 1.5', { vcpus: 1.5 }],
      ['gpus -1', { gpus: -1 }],
      ['trainiumDevices 0.5', { trainiumDevices: 0.5 }],
      ['efaInterfaces -1', { efaInterfaces: -1 }],
      ['memoryGiB 0', { memoryGiB: 0 }],
      ['memoryGiB NaN', { memoryGiB: NaN }],
      ['gpuMemoryGiB -16', { gpuMemoryGiB: -16 }],
      ['localNvmeGB 0', { localNvmeGB: 0 }],
      ['networkGbps 0', { networkGbps: 0 }],
    ])('rejects %s', (_, override) => {
      expect(() => TrainingInstance.of('ml.x.custom', { ...CUSTOM_SPEC, ...override })).toThrow(/InvalidInstanceSpec/);
    });

    test.each<[string, Partial<TrainingInstanceSpec>]>([
      ['vcpus 1', { vcpus: 1 }],
      ['gpus 0', { gpus: 0 }],
      ['fractional memoryGiB 0.5', { memoryGiB: 0.5 }],
    ])('accepts the boundary %s', (_, override) => {
      expect(() => TrainingInstance.of('ml.x.custom', { ...CUSTOM_SPEC, ...override })).not.toThrow();
    });
  });

  describe('local NVMe', () => {
    test('p3.2xlarge uses an EBS volume', () => {
      // WHEN
      const instance = TrainingInstance.P3_2XLARGE;

      // THEN
      expect(instance.hasLocalNvme).toBe(false);
      expect(instance.localNvmeBytes).toBe(0);
    });

    test('g4dn.xlarge has 125 GB of local NVMe', () => {
      // WHEN
      const instance = TrainingInstance.G4DN_XLARGE;

      // THEN
      expect(instance.hasLocalNvme).toBe(true);
      expect(instance.localNvmeBytes).toBe(125_000_000_000);
    });
  });

  describe('NeuronCores', () => {
    test.each<[TrainingInstance, number]>([
      [TrainingInstance.TRN1_2XLARGE, 2], [TrainingInstance.TRN1_32XLARGE, 32], [TrainingInstance.TRN1N_32XLARGE, 32],
      [TrainingInstance.TRN2_48XLARGE, 64], [TrainingInstance.P4D_24XLARGE, 0],
    ])('%s has Neuron\'s default NeuronCores: %d', (instance, cores) => {
      expect(instance.neuronCores).toBe(cores);
    });

    test('of() takes the NeuronCores of a family the catalog does not know, else one process per Trainium device', () => {
      expect(TrainingInstance.of('ml.trn9.48xlarge', { vcpus: 192, memoryGiB: 2048, trainiumDevices: 16, neuronCores: 128 }).defaultProcessesPerInstance).toBe(128);
      expect(TrainingInstance.of('ml.trn9.48xlarge', { vcpus: 192, memoryGiB: 2048, trainiumDevices: 16 }).defaultProcessesPerInstance).toBe(16);
      expect(() => TrainingInstance.of('ml.trn9.48xlarge', { vcpus: 192, memoryGiB: 2048, trainiumDevices: 16, neuronCores: 1.5 })).toThrow(/InvalidInstanceSpec.*neuronCores/);
    });
  });

  describe('sizeDataLoaders', () => {
    test.each<[string, TrainingInstance, DataLoaderSizingOptions, DataLoaderSizing]>([
      // 96 vCPUs / 8 GPUs = 12 per rank, minus the rank itself; memory 768 / 8 / 2 GiB = 48 is no limit
      ['p3dn.24xlarge, one process per GPU', TrainingInstance.P3DN_24XLARGE, {}, { processesPerInstance: 8, vcpusPerProcess: 12, loaderWorkers: 11, daliThreads: 11, limitedByMemory: false }],
      // 48 / 4 = 12 → 11; memory 192 / 4 / 2 = 24
      ['g4dn.12xlarge, one process per GPU', TrainingInstance.G4DN_12XLARGE, {}, { processesPerInstance: 4, vcpusPerProcess: 12, loaderWorkers: 11, daliThreads: 11, limitedByMemory: false }],
      // 4 / 1 = 4 → 3; memory 16 / 2 = 8
      ['g5.xlarge, one GPU', TrainingInstance.G5_XLARGE, {}, { processesPerInstance: 1, vcpusPerProcess: 4, loaderWorkers: 3, daliThreads: 3, limitedByMemory: false }],
      // 128 vCPUs / 32 NeuronCores (2 per Trainium, Neuron's default) = 4 → 3; memory 512 / 32 / 2 = 8
      ['trn1.32xlarge, one process per NeuronCore', TrainingInstance.TRN1_32XLARGE, {}, { processesPerInstance: 32, vcpusPerProcess: 4, loaderWorkers: 3, daliThreads: 3, limitedByMemory: false }],
      // 192 vCPUs / 64 logical NeuronCores (4 per Trainium2 at LNC=2) = 3 → 2; memory 2048 / 64 / 2 = 16
      ['trn2.48xlarge, one process per logical NeuronCore', TrainingInstance.TRN2_48XLARGE, {}, { processesPerInstance: 64, vcpusPerProcess: 3, loaderWorkers: 2, daliThreads: 2, limitedByMemory: false }],
      // 8 vCPUs / 2 NeuronCores = 4 → 3; memory 32 / 2 / 2 = 8
      ['trn1.2xlarge, one process per NeuronCore', TrainingInstance.TRN1_2XLARGE, {}, { processesPerInstance: 2, vcpusPerProcess: 4, loaderWorkers: 3, daliThreads: 3, limitedByMemory: false }],
      // a single process on 96 vCPUs → 95; memory 1152 / 2 = 576
      ['p4d.24xlarge with processesPerInstance 1', TrainingInstance.P4D_24XLARGE, { processesPerInstance: 1 }, { processesPerInstance: 1, vcpusPerProcess: 96, loaderWorkers: 95, daliThreads: 95, limitedByMemory: false }],
      // CPU allows 63, memory 16 GiB / 2 GiB = 8
      ['64 vCPUs with only 16 GiB', TrainingInstance.of('ml.x.custom', { vcpus: 64, memoryGiB: 16, gpus: 1 }), {}, { processesPerInstance: 1, vcpusPerProcess: 64, loaderWorkers: 8, daliThreads: 63, limitedByMemory: true }],
      // CPU allows 3, memory 16 GiB / 8 GiB = 2
      ['g4dn.xlarge with memoryPerWorker 8 GiB', TrainingInstance.G4DN_XLARGE, { memoryPerWorker: Size.gibibytes(8) }, { processesPerInstance: 1, vcpusPerProcess: 4, loaderWorkers: 2, daliThreads: 3, limitedByMemory: true }],
      // CPU allows 63, memory 16 GiB / 0.931 GiB (1e9 bytes, not a whole number of MiB) = 17
      ['64 vCPUs, 16 GiB with memoryPerWorker of 1e9 bytes', TrainingInstance.of('ml.x.custom', { vcpus: 64, memoryGiB: 16, gpus: 1 }), { memoryPerWorker: Size.bytes(1e9) }, { processesPerInstance: 1, vcpusPerProcess: 64, loaderWorkers: 17, daliThreads: 63, limitedByMemory: true }],
      // 1 vCPU − 1 = 0, raised to the minimum of 1
      ['a 1-vCPU instance', TrainingInstance.of('ml.x.tiny', { vcpus: 1, memoryGiB: 2 }), {}, { processesPerInstance: 1, vcpusPerProcess: 1, loaderWorkers: 1, daliThreads: 1, limitedByMemory: false }],
      // 1 GiB / 2 GiB = 0, raised to the minimum of 1; CPU also allows 1
      ['memory below one worker', TrainingInstance.of('ml.x.tiny', { vcpus: 2, memoryGiB: 1 }), {}, { processesPerInstance: 1, vcpusPerProcess: 2, loaderWorkers: 1, daliThreads: 1, limitedByMemory: false }],
      // 8 vCPUs / 3 processes = 2 (rounded down) → 1
      ['p3.2xlarge with 3 processes', TrainingInstance.P3_2XLARGE, { processesPerInstance: 3 }, { processesPerInstance: 3, vcpusPerProcess: 2, loaderWorkers: 1, daliThreads: 1, limitedByMemory: false }],
    ])('%s', (_, instance, options, expected) => {
      // WHEN
      const sizing = instance.sizeDataLoaders(options);

      // THEN
      expect(sizing).toEqual(expected);
    });

    test('DALI threads follow the CPU rule without the memory cap', () => {
      // GIVEN 64 vCPUs but 16 GiB: memory caps loader workers at 8
      const instance = TrainingInstance.of('ml.x.custom', { vcpus: 64, memoryGiB: 16, gpus: 1 });

      // WHEN
      const sizing = instance.sizeDataLoaders();

      // THEN threads share the process's memory, so 64 − 1
      expect(sizing.loaderWorkers).toBe(8);
      expect(sizing.daliThreads).toBe(63);
    });

    test('DALI threads equal loader workers when memory is no limit', () => {
      // WHEN
      const sizing = TrainingInstance.P3DN_24XLARGE.sizeDataLoaders();

      // THEN
      expect(sizing.daliThreads).toBe(11);
      expect(sizing.loaderWorkers).toBe(11);
    });

    test('processesPerInstance equal to the vCPUs is allowed', () => {
      // WHEN
      const sizing = TrainingInstance.G5_XLARGE.sizeDataLoaders({ processesPerInstance: 4 });

      // THEN
      expect(sizing).toMatchObject({ vcpusPerProcess: 1, loaderWorkers: 1, daliThreads: 1 });
    });

    test.each([0, 1.5, -1, 5])('processesPerInstance %p on the 4 vCPUs of g5.xlarge throws', (processesPerInstance) => {
      expect(() => TrainingInstance.G5_XLARGE.sizeDataLoaders({ processesPerInstance }))
        .toThrow(/InvalidProcessesPerInstance.*got -?[0-9.]+$/);
    });

    test('a memoryPerWorker of 0 throws', () => {
      expect(() => TrainingInstance.G5_XLARGE.sizeDataLoaders({ memoryPerWorker: Size.gibibytes(0) }))
        .toThrow(/InvalidMemoryPerWorker/);
    });
  });
});
