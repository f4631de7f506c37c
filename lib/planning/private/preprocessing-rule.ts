import { cpuDecodeSamplesPerSecond } from '../../instances/private/loader-rules';
import { SampleEncoding } from '../dataset-profile';
import type { ImagePreprocessingAdvice } from '../io-plan';
import type { DecodingRates } from './decoding-rates';
import { describeCpuDecodingBriefly, resizedSampleBytes, RESIZED_SHORTER_SIDE } from './decoding-rates';
import type { ResolvedDataset } from './plan-inputs';
import { formatBytes, formatCount } from './units';

/** How to resize, named as the construct and the command line name it. */
const HOW = `resize at pack time (ShardedDataset imagePreprocessing, e.g. shorterSidePixels ${RESIZED_SHORTER_SIDE} for 224-pixel crops, ` +
  `or training-io pack --resize ${RESIZED_SHORTER_SIDE})`;

/**
 * Resizing at pack time, advised when the loader workers of a process decode fewer JPEGs a second
 * than each GPU consumes: every epoch then decodes fewer bytes. The rates are the GPU decoding row's
 * (the same per-worker rate, by sample size), at the size a resized JPEG has; the gain stops at what
 * the GPU consumes (on an H100 at 8 vCPUs, resized images lifted a ResNet-50 job from 2,148 to 3,207
 * samples/s, 1.5×: the GPU's speed).
 * `rates`: at the size the loaders decode, resized already where `preprocessed`.
 */
export function adviseImagePreprocessing(dataset: ResolvedDataset, rates: DecodingRates, preprocessed: boolean): ImagePreprocessingAdvice {
  const { demand } = rates;
  const decodes = describeCpuDecodingBriefly(rates, preprocessed);
  const resizedBytes = preprocessed ? rates.sampleBytes : resizedSampleBytes(rates.sampleBytes);
  const resized = preprocessed ? rates.perProcess : cpuDecodeSamplesPerSecond(rates.workers, resizedBytes);
  const notAdvised = (reason: string): ImagePreprocessingAdvice => ({ advised: false, resizedCpuSamplesPerSecondPerProcess: resized, reason });
  if (dataset.sampleEncoding !== SampleEncoding.JPEG) return notAdvised('the samples are not JPEG images: nothing to resize');
  const compared = demand === undefined ? '; give the samples/s each GPU consumes to compare'
    : demand.samplesPerSecond > resized
      ? `, less than ${demand.brief}: decode on the GPU too (the GPU decoding row), or use more vCPUs per GPU`
      : `, enough for ${demand.brief}`;
  if (preprocessed) return notAdvised(`resized at pack time: ${decodes}${compared}`);
  if (resizedBytes >= rates.sampleBytes) {
    return notAdvised(`${decodes}${compared}; they are no larger than a JPEG resized to a shorter side of ${RESIZED_SHORTER_SIDE} ` +
      `pixels (~${formatBytes(resizedBytes)}): resizing would not decode fewer bytes`);
  }
  const ifResized = `resized to a shorter side of ${RESIZED_SHORTER_SIDE} pixels (~${formatBytes(resizedBytes)} each) they would decode ` +
    `about ${formatCount(resized)}/s`;
  if (demand === undefined) return notAdvised(`${decodes}; ${ifResized}; give the samples/s each GPU consumes to compare`);
  if (demand.samplesPerSecond <= rates.perProcess) return notAdvised(`${decodes}, enough for ${demand.brief}`);
  const fed = Math.min(demand.samplesPerSecond, resized);
  const expectedSpeedup = Math.round((fed / rates.perProcess) * 100) / 100;
  const still = demand.samplesPerSecond > resized ? ', still less than the GPU consumes: decode on the GPU too (the GPU decoding row)' : '';
  return {
    advised: true,
    resizedCpuSamplesPerSecondPerProcess: resized,
    expectedSpeedup,
    reason: `${decodes}, less than ${demand.brief}: ${HOW}; ${ifResized}, about ${formatCount(fed)} samples/s per GPU ` +
      `(${expectedSpeedup}×)${still}`,
  };
}
