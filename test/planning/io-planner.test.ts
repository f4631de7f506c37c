import { Size, Token } from 'aws-cdk-lib';
import type { DatasetProfile, IoPlan, IoPlanProps, TrainingCluster} from '../../lib';
import {
  DatasetFormat, InputMode, IoPlanner, PlannedInputMode, PlannedLoader,
  S3DataDistribution, SampleEncoding, TrainingInstance,
} from '../../lib';
import { objectsPerSecond } from '../../lib/planning/private/startup-rules';
import { fileDownloadSeconds } from '../../lib/planning/private/mode-rates';

const GB = 1e9;
const GIB = 2 ** 30;
const MIB = 2 ** 20;

/** The ml.p3dn.24xlarge NVMe holds this much File-mode data: (1800 GB − 50 GiB) / 1.1. */
const P3DN_FILE_MODE_LIMIT = Math.floor((1800 * GB - 50 * GIB) / 1.1);

function files(objectCount: number, totalBytes: number, extra: Partial<DatasetProfile> = {}): DatasetProfile {
  return { objectCount, totalSize: Size.bytes(totalBytes), ...extra };
}

function cluster(instance: TrainingInstance, instanceCount = 1, extra: Partial<TrainingCluster> = {}): TrainingCluster {
  return { instance, instanceCount, ...extra };
}

function plan(dataset: DatasetProfile, trainingCluster: TrainingCluster, extra: Partial<IoPlanProps> = {}): IoPlan {
  return IoPlanner.plan({ dataset, cluster: trainingCluster, ...extra });
}

function warningCodes(result: IoPlan): string[] {
  return result.warnings.map((w) => w.code);
}

describe('IoPlanner', () => {
  describe('cases from the practice the library is built on', () => {
    test('2,000 × 5 MB objects download in minutes, not hours', () => {
      // WHEN
      const result = plan(files(2_000, 10 * GB), cluster(TrainingInstance.P3DN_24XLARGE));

      // THEN
      expect(result.startup.unpackedSeconds ?? result.startup.seconds).toBeLessThan(10 * 60);
    });

    test.each([
      ['ml.g5.2xlarge', TrainingInstance.G5_2XLARGE],
      ['ml.g4dn.2xlarge', TrainingInstance.G4DN_2XLARGE],
      ['ml.p3.2xlarge', TrainingInstance.P3_2XLARGE],
    ])('a single-GPU 8-vCPU instance (%s) gets 7 workers', (_name, instance) => {
      // WHEN
      const { loaders } = plan(files(1000, GB), cluster(instance));

      // THEN
      expect(loaders).toMatchObject({ processesPerInstance: 1, loaderWorkers: 7, daliThreads: 7, limitedByMemory: false });
      expect(loaders.reason).toMatch(/^7 workers and 7 DALI threads per process: 8 vCPUs ÷ 1 process = 8 per process/);
    });

    test.each([
      ['ml.p3dn.24xlarge', TrainingInstance.P3DN_24XLARGE],
      ['ml.p4d.24xlarge', TrainingInstance.P4D_24XLARGE],
    ])('an 8-GPU 96-vCPU instance (%s) gets 11 workers per process, not 95', (_name, instance) => {
      // WHEN
      const { loaders } = plan(files(1000, GB), cluster(instance));

      // THEN
      expect(loaders).toMatchObject({ processesPerInstance: 8, loaderWorkers: 11, daliThreads: 11 });
    });
  });

  describe('input mode', () => {
    test.each<[string, number, PlannedInputMode]>([
      ['at the limit', P3DN_FILE_MODE_LIMIT, PlannedInputMode.FILE],
      ['one byte over', P3DN_FILE_MODE_LIMIT + 1, PlannedInputMode.FAST_FILE],
    ])('File on local NVMe while data + 10 %% + 50 GiB fit it: %s of ml.p3dn.24xlarge', (_what, bytes, mode) => {
      // WHEN
      const result = plan(files(100_000, bytes), cluster(TrainingInstance.P3DN_24XLARGE));

      // THEN
      expect(result.inputMode.mode).toBe(mode);
    });

    test('an FSx for Lustre channel is File mode and FullyReplicated', () => {
      // WHEN
      const { inputMode } = plan(files(10_000_000, 3000 * GB), cluster(TrainingInstance.P3DN_24XLARGE, 2), { reusedAcrossJobs: true });

      // THEN
      expect(inputMode).toMatchObject({
        mode: PlannedInputMode.FSX_LUSTRE, channelInputMode: InputMode.FILE,
        distribution: S3DataDistribution.FULLY_REPLICATED, shuffleConfig: false,
      });
    });

    test('large files that are not record shards are streamed with FastFile and ShardedByS3Key, not Pipe', () => {
      // GIVEN 30,000 videos of 100 MB: not packed, not records
      const dataset = files(30_000, 3000 * GB);

      // WHEN
      const { inputMode, packing } = plan(dataset, cluster(TrainingInstance.P3DN_24XLARGE, 2));

      // THEN
      expect(packing.pack).toBe(false);
      expect(inputMode).toMatchObject({ mode: PlannedInputMode.FAST_FILE, distribution: S3DataDistribution.SHARDED_BY_S3_KEY });
    });

    test('a larger memory budget per worker leaves less for the page cache', () => {
      // WHEN 8 × 11 × 4 GiB = 352 GiB of 768 GiB for the loaders
      const { inputMode } = plan(files(100_000, 500 * GIB), cluster(TrainingInstance.P3DN_24XLARGE, 1, { memoryPerLoaderWorker: Size.gibibytes(4) }));

      // THEN
      expect(inputMode.fitsInMemory).toBe(false);
    });
  });

  describe('packing', () => {
    test('with ShardedByS3Key each instance gets an equal share of the shards, a whole number per consumer', () => {
      // WHEN Pipe over 4 instances
      const { packing, inputMode } = plan(files(30_000_000, 3000 * GB), cluster(TrainingInstance.P3DN_24XLARGE, 4));

      // THEN
      expect(inputMode.distribution).toBe(S3DataDistribution.SHARDED_BY_S3_KEY);
      expect(packing.shardsPerInstance).toBe(packing.shardCount / 4);
      expect(packing.shardsPerInstance % (8 * 11)).toBe(0);
      expect(packing.reason).toMatch(/ShardedByS3Key gives each instance [\d,]+$/);
    });

    test.each<[string, DatasetFormat]>([
      ['TFRecord', DatasetFormat.TFRECORD],
      ['RecordIO', DatasetFormat.RECORDIO],
    ])('reads %s shards as they are', (_what, format) => {
      // WHEN
      const { packing } = plan(files(176, 176 * 64 * MIB, { format }), cluster(TrainingInstance.P3DN_24XLARGE, 2));

      // THEN
      expect(packing).toMatchObject({ pack: false, shardCount: 176, shardBytes: 64 * MIB });
      expect(packing.format).toBeUndefined();
      expect(packing.reason).toMatch(/the data is packed already .* share them evenly$/);
    });

    test('says how unevenly objects read as they are spread over the consumers', () => {
      // WHEN
      const { packing } = plan(files(1000, 1000 * 64 * MIB, { format: DatasetFormat.TFRECORD }), cluster(TrainingInstance.P3DN_24XLARGE, 2));

      // THEN 1000 = 5 × 176 + 120
      expect(packing.reason).toMatch(/120 readers one object more than the others$/);
    });

    test('warns about shards below 1 MiB that were packed elsewhere', () => {
      // WHEN
      const result = plan(files(10_000, 10_000 * 512 * 1024, { format: DatasetFormat.TFRECORD }), cluster(TrainingInstance.G5_2XLARGE));

      // THEN
      expect(warningCodes(result)).toEqual(['smallShards']);
    });

    test('warns when there are fewer files than consumers', () => {
      // WHEN 100 small files for 176 readers
      const result = plan(files(100, 100 * 1e6), cluster(TrainingInstance.P3DN_24XLARGE, 2));

      // THEN
      expect(warningCodes(result)).toContain('moreConsumersThanObjects');
      expect(result.warnings.find((w) => w.code === 'moreConsumersThanObjects')?.message).toMatch(/use at most 100 consumers/);
    });

    test('warns when the consumers make shards below 1 MiB', () => {
      // WHEN 100 MB of small files over 176 consumers: 176 shards of 0.54 MiB
      const result = plan(files(100_000, 100e6), cluster(TrainingInstance.P3DN_24XLARGE, 2));

      // THEN
      expect(result.packing.shardCount).toBe(176);
      expect(warningCodes(result)).toEqual(['shardsBelowMinimum']);
    });
  });

  describe('packing layout, where the objects are packed whatever the price (alwaysPacked, as TrainingPipeline plans)', () => {
    const packed: Partial<IoPlanProps> = { alwaysPacked: true };

    test.each<[number, boolean]>([
      [50e6 - 1, true],
      [50e6, false],
    ])('packs files smaller than 50 MB (SageMaker\'s "many small files"): a mean of %d bytes', (meanBytes, pack) => {
      // WHEN
      const result = plan({ objectCount: 1000, meanObjectSize: Size.bytes(meanBytes) }, cluster(TrainingInstance.G5_2XLARGE), packed);

      // THEN
      expect(result.packing.pack).toBe(pack);
      expect(result.modes.some((mode) => mode.packed)).toBe(pack);
    });

    test.each<[string, TrainingCluster, number]>([
      ['1 × ml.g5.2xlarge: 1 × 1 × 7', cluster(TrainingInstance.G5_2XLARGE), 7],
      ['2 × ml.p3dn.24xlarge: 2 × 8 × 11', cluster(TrainingInstance.P3DN_24XLARGE, 2), 176],
      ['4 × ml.g4dn.12xlarge: 4 × 4 × 11', cluster(TrainingInstance.G4DN_12XLARGE, 4), 176],
      ['2 × ml.trn1.32xlarge, a process per NeuronCore: 2 × 32 × 3', cluster(TrainingInstance.TRN1_32XLARGE, 2), 192],
      ['given workers: 2 × 8 × 4', cluster(TrainingInstance.P3DN_24XLARGE, 2, { loaderWorkers: 4 }), 64],
      ['one process per instance: 2 × 1 × 95', cluster(TrainingInstance.P3DN_24XLARGE, 2, { processesPerInstance: 1 }), 190],
    ])('the shard count is a multiple of the consumers, %s', (_what, trainingCluster, consumers) => {
      // WHEN 100 GB of 100 KB files
      const { packing } = plan(files(1_000_000, 100 * GB), trainingCluster, packed);

      // THEN at the chosen mode's target (64 MiB, or 128 MiB for FastFile)
      const target = packing.targetShardBytes!;
      expect(packing.pack).toBe(true);
      expect(packing.consumers).toBe(consumers);
      expect(packing.shardCount % consumers).toBe(0);
      expect(packing.shardCount).toBeGreaterThanOrEqual(Math.ceil(100 * GB / target));
      expect(packing.shardCount - Math.ceil(100 * GB / target)).toBeLessThan(consumers);
      expect(packing.shardBytes).toBeLessThanOrEqual(target);
    });

    test('targets 128 MiB, the largest, for FastFile, and 64 MiB for the other modes', () => {
      // WHEN
      const result = plan(files(30_000_000, 3000 * GB), cluster(TrainingInstance.P3DN_24XLARGE), packed);

      // THEN
      expect(result.packing.targetShardBytes).toBe(result.inputMode.mode === PlannedInputMode.FAST_FILE ? 128 * MIB : 64 * MIB);
      expect(result.packing.shardBytes).toBeGreaterThanOrEqual(1 * MIB);
      expect(result.packing.shardBytes).toBeLessThanOrEqual(128 * MIB);
    });

    test('never plans more shards than files (rounded down to a multiple of the consumers)', () => {
      // WHEN 300 files of 40 MB: 90–179 shards by size, 352 rounded up, but only 300 files → 176
      const { packing } = plan(files(300, 300 * 40e6), cluster(TrainingInstance.P3DN_24XLARGE, 2), packed);

      // THEN
      expect(packing.shardCount).toBe(176);
    });

    test('only packed rows are chosen from, but every row is still priced', () => {
      // WHEN 2,000,000 × 5 KB on one ml.g5.2xlarge
      const result = plan(files(2_000_000, 10 * GB), cluster(TrainingInstance.G5_2XLARGE), packed);

      // THEN
      expect(result.choice.label).toMatch(/packed$/);
      expect(result.modes.filter((mode) => !mode.packed).length).toBeGreaterThan(0);
    });
  });

  describe('loaders, pinned memory and GPU decoding', () => {
    test('memory caps the workers: 8 GiB each on the 16 GiB of ml.g4dn.xlarge', () => {
      // WHEN
      const { loaders } = plan(files(1000, GB), cluster(TrainingInstance.G4DN_XLARGE, 1, { memoryPerLoaderWorker: Size.gibibytes(8) }));

      // THEN
      expect(loaders).toMatchObject({ loaderWorkers: 2, daliThreads: 3, limitedByMemory: true });
      expect(loaders.reason).toMatch(/capped by memory at 2/);
    });

    test('given workers are kept, and the reason says what the rule would give', () => {
      // WHEN
      const { loaders } = plan(files(1000, GB), cluster(TrainingInstance.P3DN_24XLARGE, 1, { loaderWorkers: 6 }));

      // THEN
      expect(loaders.loaderWorkers).toBe(6);
      expect(loaders.reason).toMatch(/^6 workers as given \(the sizing rule says 11/);
    });

    test.each<[string, TrainingInstance, boolean]>([
      ['an NVIDIA GPU', TrainingInstance.G5_2XLARGE, true],
      ['Trainium', TrainingInstance.TRN1_2XLARGE, false],
    ])('pins memory on %s', (_what, instance, pinMemory) => {
      // WHEN
      const result = plan(files(1000, GB), cluster(instance));

      // THEN
      expect(result.pinMemory.pinMemory).toBe(pinMemory);
    });

    test.each<[number, PlannedLoader]>([
      [3062, PlannedLoader.CPU],
      [3063, PlannedLoader.GPU],
      [11557, PlannedLoader.GPU],
    ])('11 workers decode and augment ~3,062 JPEGs of 110 KB/s: a GPU consuming %d gets the %s path, never hybrid', (samples, loader) => {
      // WHEN
      const { gpuDecoding } = plan(files(1_000_000, 110 * GB), cluster(TrainingInstance.P3DN_24XLARGE), { samplesPerSecondPerDevice: samples });

      // THEN
      expect(gpuDecoding).toMatchObject({
        loader, advised: loader !== PlannedLoader.CPU, cpuSamplesPerSecondPerProcess: 3062, gpuSamplesPerSecond: samples,
      });
      expect(gpuDecoding.reason).not.toMatch(/hybrid/);
      if (loader === PlannedLoader.GPU) expect(gpuDecoding.reason).toMatch(/NVIDIA DALI \(device='mixed', TrainingContainer\.dali\(\)\), or nvJPEG/);
    });

    test.each<[number, number]>([
      [5e3, 17172],
      [90e3, 3630],
    ])('the CPU rates follow the mean sample size (the decoding-rate table\'s 330 at 90 KB): 11 workers, samples of %d bytes', (bytes, augmented) => {
      // WHEN
      const { gpuDecoding } = plan(files(1_000_000, bytes * 1_000_000), cluster(TrainingInstance.P3DN_24XLARGE), { samplesPerSecondPerDevice: 1000 });

      // THEN
      expect(gpuDecoding).toMatchObject({ cpuSamplesPerSecondPerProcess: augmented });
    });

    test.each<[string, TrainingInstance, number]>([
      ['ml.g5.xlarge', TrainingInstance.G5_XLARGE, 1000],
      ['ml.g5.2xlarge', TrainingInstance.G5_2XLARGE, 2500],
      ['ml.g5.2xlarge', TrainingInstance.G5_2XLARGE, 4000],
    ])('on %s at %d samples/s, where the workers fall short, the plan says the GPU path, never hybrid', (_name, instance, samples) => {
      // WHEN
      const { gpuDecoding } = plan(files(1_000_000, 110 * GB), cluster(instance), { samplesPerSecondPerDevice: samples });

      // THEN
      expect(gpuDecoding).toMatchObject({ advised: true, loader: PlannedLoader.GPU });
      expect(gpuDecoding.reason).not.toMatch(/hybrid/);
    });

    test('without samplesPerSecondPerDevice, a known GPU consumes what it trains ResNet-50 at (V100: 1,156/s, NVIDIA\'s figure)', () => {
      // WHEN 7 workers of ml.p3.2xlarge
      const { gpuDecoding } = plan(files(1_000_000, 110 * GB), cluster(TrainingInstance.P3_2XLARGE));

      // THEN
      expect(gpuDecoding).toMatchObject({ loader: PlannedLoader.CPU, gpuSamplesPerSecond: 1156, cpuSamplesPerSecondPerProcess: 1948 });
      expect(gpuDecoding.reason).toMatch(/enough for the ~1,156 a V100 trains ResNet-50 at with an eager step \(no compiled figure measured for the V100: a compiled step trains faster; NVIDIA DeepLearningExamples/);
    });

    test('a shard dataset without recordCount is assumed to hold JPEGs of ~90 KB, and says so', () => {
      // WHEN
      const { gpuDecoding } = plan({ objectCount: 100, totalSize: Size.bytes(10e9), format: DatasetFormat.TFRECORD },
        cluster(TrainingInstance.P3_2XLARGE));

      // THEN 7 workers x 330/s
      expect(gpuDecoding.cpuSamplesPerSecondPerProcess).toBe(2310);
      expect(gpuDecoding.reason).toMatch(/\(~90\.0 KB each assumed: give dataset\.recordCount for a shard dataset's sample size;/);
    });

    test.each<[string, TrainingInstance, Partial<DatasetProfile>, number | undefined, RegExp]>([
      ['the load is unknown and the GPU is not in the table', TrainingInstance.G5_2XLARGE, {}, undefined, /give the samples\/s each GPU consumes/],
      ['the samples are not JPEGs', TrainingInstance.P3DN_24XLARGE, { sampleEncoding: SampleEncoding.OTHER }, 5000, /not JPEG images/],
      ['there is no NVIDIA GPU', TrainingInstance.TRN1_32XLARGE, {}, 5000, /no NVIDIA GPU/],
    ])('does not advise GPU decoding when %s', (_what, instance, extra, samples, reason) => {
      // WHEN
      const { gpuDecoding } = plan(files(1_000_000, 110 * GB, extra), cluster(instance), { samplesPerSecondPerDevice: samples });

      // THEN
      expect(gpuDecoding).toMatchObject({ advised: false, loader: PlannedLoader.CPU });
      expect(gpuDecoding.reason).toMatch(reason);
    });

    test('warns when the CPUs cannot decode fast enough and there is no GPU to decode on', () => {
      // WHEN 7 workers per Trainium device decode ~700/s
      const result = plan(files(1_000_000, 110 * GB), cluster(TrainingInstance.TRN1_32XLARGE), { samplesPerSecondPerDevice: 2000 });

      // THEN
      expect(warningCodes(result)).toContain('cpuBoundDecoding');
    });
  });

  test('no reason cites a path the package does not ship (bench/, test/): every catalogued instance, files and shards, with and without a GPU rate', () => {
    // GIVEN
    const cited: string[] = [];
    for (const instance of TrainingInstance.all()) {
      for (const dataset of [files(1_000_000, 1.2e12), files(2000, 100e9, { format: DatasetFormat.TFRECORD, recordCount: 1_000_000 }), files(1_000_000, 5e9)]) {
        for (const extra of [{}, { samplesPerSecondPerDevice: 2000 }, { reusedAcrossJobs: true, epochs: 90 }]) {
          // WHEN
          const text = JSON.stringify(plan(dataset, cluster(instance, 2), extra));
          // THEN
          cited.push(...(text.match(/\b(?:bench|test)\/[\w./-]*/g) ?? []).map((path) => `${instance.instanceType}: ${path}`));
        }
      }
    }
    expect([...new Set(cited)]).toEqual([]);
  });

  describe('start-up and read rate', () => {
    test('many instances downloading one prefix share S3\'s 5,500 GET/s', () => {
      // THEN
      expect(objectsPerSecond(1)).toBe(400);
      expect(objectsPerSecond(13)).toBe(400);
      expect(objectsPerSecond(14)).toBeCloseTo(5500 / 14);
      expect(fileDownloadSeconds(TrainingInstance.P3DN_24XLARGE, 0, 5500, 32)).toBeCloseTo(32);
    });

    test('the instance\'s network caps the download rate', () => {
      // GIVEN 1 Gbit/s = 125 MB/s, below 167 MB/s
      const slow = TrainingInstance.of('ml.x.slow', { vcpus: 8, memoryGiB: 32, gpus: 1, localNvmeGB: 400, networkGbps: 1 });

      // THEN
      expect(fileDownloadSeconds(slow, 125e6, 0, 1)).toBeCloseTo(1);
    });

    test('the read rate, epoch and training time follow from the samples per second', () => {
      // WHEN 2 × 8 GPUs × 1000 samples/s × 110 KB
      const { readRate } = plan(files(1_281_167, 1_281_167 * 110e3), cluster(TrainingInstance.P3DN_24XLARGE, 2),
        { samplesPerSecondPerDevice: 1000, epochs: 90 });

      // THEN
      expect(readRate?.bytesPerSecondPerInstance).toBeCloseTo(8 * 1000 * 110e3);
      expect(readRate?.bytesPerSecond).toBeCloseTo(16 * 1000 * 110e3);
      expect(readRate?.epochSeconds).toBeCloseTo(1_281_167 / 16000);
      expect(readRate?.trainingSeconds).toBeCloseTo(90 * 1_281_167 / 16000);
    });

    test('a packed dataset takes the record count for the read rate', () => {
      // WHEN
      const { readRate } = plan(files(200, 200 * 64 * MIB, { format: DatasetFormat.TFRECORD, recordCount: 100_000 }),
        cluster(TrainingInstance.G5_2XLARGE), { samplesPerSecondPerDevice: 500 });

      // THEN
      expect(readRate?.epochSeconds).toBeCloseTo(200);
    });

    test('there is no read rate without samples per second', () => {
      expect(plan(files(1000, GB), cluster(TrainingInstance.G5_2XLARGE)).readRate).toBeUndefined();
    });
  });

  describe('FSx for Lustre', () => {
  });

  describe('warnings for plans that starve the GPUs', () => {
    test('no warning when the download is a small share of a long training', () => {
      // WHEN 90 epochs of 10 GB
      const result = plan(files(2_000_000, 10 * GB), cluster(TrainingInstance.P3DN_24XLARGE, 2), { epochs: 90, samplesPerSecondPerDevice: 1000 });

      // THEN
      expect(result.warnings).toEqual([]);
    });

  });

  describe('input checks', () => {
    const instance = TrainingInstance.G5_2XLARGE;

    test.each<[string, DatasetProfile, RegExp]>([
      ['no objects', files(0, GB), /InvalidObjectCount\] dataset\.objectCount must be a whole number of at least 1, got 0/],
      ['negative objects', files(-5, GB), /InvalidObjectCount.*got -5/],
      ['a fraction of an object', files(1.5, GB), /InvalidObjectCount.*got 1\.5/],
      ['0 bytes', files(10, 0), /InvalidDatasetSize\] dataset\.totalSize must be more than 0 bytes, got 0 bytes/],
      ['a mean size of 0', { objectCount: 10, meanObjectSize: Size.bytes(0) }, /InvalidDatasetSize\] dataset\.meanObjectSize/],
      ['both sizes', { objectCount: 10, totalSize: Size.gibibytes(1), meanObjectSize: Size.mebibytes(1) }, /DatasetSizeAndMeanSize/],
      ['no size', { objectCount: 10 }, /MissingDatasetSize\] dataset needs totalSize or meanObjectSize, got neither/],
      ['0 records', files(10, GB, { recordCount: 0 }), /InvalidRecordCount.*got 0/],
      ['a deploy-time object count', files(Token.asNumber({ Ref: 'N' }), GB), /UnresolvedPlanInput\] dataset\.objectCount must be known at synth time/],
      ['a deploy-time size', { objectCount: 10, totalSize: Size.bytes(Token.asNumber({ Ref: 'B' })) }, /UnresolvedPlanInput\] dataset\.totalSize/],
    ])('%s is refused, naming the field, the value and what is allowed', (_what, dataset, message) => {
      expect(() => plan(dataset, cluster(instance))).toThrow(message);
    });

    test.each<[string, TrainingCluster, RegExp]>([
      ['0 instances', cluster(instance, 0), /InvalidInstanceCount\] cluster\.instanceCount must be a whole number between 1 and 10000, got 0/],
      ['negative instances', cluster(instance, -2), /InvalidInstanceCount.*got -2/],
      ['more processes than vCPUs', cluster(instance, 1, { processesPerInstance: 9 }), /InvalidProcessesPerInstance.*got 9/],
      ['negative workers', cluster(instance, 1, { loaderWorkers: -1 }), /InvalidDataLoaderWorkers\] cluster\.loaderWorkers .* got -1/],
      ['a deploy-time instance count', cluster(instance, Token.asNumber({ Ref: 'N' })), /UnresolvedPlanInput\] cluster\.instanceCount/],
    ])('a cluster with %s is refused', (_what, trainingCluster, message) => {
      expect(() => plan(files(10, GB), trainingCluster)).toThrow(message);
    });

    test.each<[string, Partial<IoPlanProps>, RegExp]>([
      ['0 epochs', { epochs: 0 }, /InvalidEpochs\] epochs must be a whole number of at least 1, got 0/],
      ['2.5 epochs', { epochs: 2.5 }, /InvalidEpochs.*got 2\.5/],
      ['0 samples/s', { samplesPerSecondPerDevice: 0 }, /InvalidSamplesPerSecond.*got 0/],
      ['infinite samples/s', { samplesPerSecondPerDevice: Infinity }, /InvalidSamplesPerSecond.*got Infinity/],
      ['NaN samples/s', { samplesPerSecondPerDevice: NaN }, /InvalidSamplesPerSecond.*got NaN/],
    ])('%s is refused', (_what, extra, message) => {
      expect(() => plan(files(10, GB), cluster(instance), extra)).toThrow(message);
    });

    test('samples per second on shards need the record count', () => {
      expect(() => plan(files(10, GB, { format: DatasetFormat.RECORDIO }), cluster(instance), { samplesPerSecondPerDevice: 100 }))
        .toThrow(/RecordCountRequired\] samplesPerSecondPerDevice needs dataset\.recordCount for a recordio dataset/);
    });

    test('the mean object size gives the total', () => {
      // WHEN
      const { dataset } = plan({ objectCount: 2_000_000, meanObjectSize: Size.bytes(5000) }, cluster(instance));

      // THEN
      expect(dataset).toEqual({ objectCount: 2_000_000, totalBytes: 10 * GB, meanObjectBytes: 5000, format: DatasetFormat.FILES, recordCount: 2_000_000 });
    });
  });
});
