import type { ResolvedCluster } from '../../instances/private/cluster-rules';
import type { ModeChoice, ModeEstimate, PlanWarning } from '../io-plan';
import type { ResolvedPrices } from './resolved-prices';
import { STARTUP_SHARE_WARNING } from './startup-rules';
import { formatCount, formatDollars, formatSeconds } from './units';

/** What the choice is judged against beyond the rows. */
export interface ChoiceContext {
  readonly cluster: ResolvedCluster;
  readonly prices: ResolvedPrices;
  readonly jobsPerMonth: number;
  /** Dollars per job above which the plan warns. */
  readonly maxDollarsPerJob?: number;
}

function byMonth(a: ModeEstimate, b: ModeEstimate): number {
  return a.dollarsPerMonth - b.dollarsPerMonth;
}

function byStarved(a: ModeEstimate, b: ModeEstimate): number {
  return a.starvedSeconds - b.starvedSeconds || byMonth(a, b);
}

/**
 * The cheapest row per month among those that keep the devices busy (every row, where their rate is
 * unknown), with the runner-up it beats; where none keeps them busy, the least starved, with a
 * warning naming the idle device-hours and their dollars. Warns, too, when start-up exceeds 10 % of
 * the training, or the job costs more than the dollars set.
 */
export function chooseMode(modes: ModeEstimate[], context: ChoiceContext): { choice: ModeChoice; chosen: ModeEstimate; warnings: PlanWarning[] } {
  const fed = modes.filter((mode) => mode.feedsGpus !== false).sort(byMonth);
  const ranked = fed.length > 0 ? fed : [...modes].sort(byStarved);
  const [chosen, runnerUp] = ranked;
  const warnings: PlanWarning[] = [];
  const { cluster } = context;
  const month = context.jobsPerMonth === 1 ? 'a month of one job' : `a month of ${context.jobsPerMonth} jobs`;
  let reason: string;
  if (fed.length > 0) {
    const feeds = chosen.feedsGpus === undefined ? 'the cheapest (give the samples/s per device to judge which keep the GPUs fed)'
      : 'the cheapest that keeps the GPUs fed';
    reason = `${chosen.label}: ${feeds}, ${formatDollars(chosen.dollarsPerJob)} per job, ${formatDollars(chosen.dollarsPerMonth)} for ${month}` +
      (runnerUp ? `; ${formatDollars(runnerUp.dollarsPerMonth - chosen.dollarsPerMonth)} less than ${runnerUp.label}` : '');
  } else {
    const devices = cluster.instanceCount * Math.max(1, cluster.instance.acceleratorCount);
    const idleHours = chosen.starvedSeconds / 3600;
    const idleDollars = idleHours * cluster.instanceCount * (context.prices.instanceHourly(cluster.instance.instanceType) ?? 0);
    reason = `${chosen.label}: no way of reading the data keeps the GPUs fed; this one starves them least ` +
      `(${chosen.bottleneck}), ${formatDollars(chosen.dollarsPerJob)} per job`;
    warnings.push({
      code: 'gpusStarved',
      message: `no input mode keeps the GPUs fed: with ${chosen.label}, the least starved, ${formatCount(devices)} devices wait ` +
        `${formatSeconds(chosen.starvedSeconds)} each for data (${chosen.bottleneck}): ${formatCount(idleHours * devices)} idle device-hours, ` +
        `${formatDollars(idleDollars)} per job; pack the data, resize the images, or use instances with more network`,
    });
  }
  if (chosen.trainingSeconds > 0 && chosen.startupSeconds > STARTUP_SHARE_WARNING * chosen.trainingSeconds) {
    warnings.push({
      code: 'longStartup',
      message: `${chosen.label}: the ${formatSeconds(chosen.startupSeconds)} before the first batch is more than ` +
        `${STARTUP_SHARE_WARNING * 100} % of the ${formatSeconds(chosen.trainingSeconds)} of training: the GPUs idle meanwhile`,
    });
  }
  if (context.maxDollarsPerJob !== undefined && chosen.dollarsPerJob > context.maxDollarsPerJob) {
    warnings.push({
      code: 'aboveMaxDollars',
      message: `${chosen.label}, the cheapest choice, costs ${formatDollars(chosen.dollarsPerJob)} per job, more than the ` +
        `${formatDollars(context.maxDollarsPerJob)} set: fewer epochs, fewer or cheaper instances, or managed spot training`,
    });
  }
  if (context.prices.instanceHourly(cluster.instance.instanceType) === undefined) {
    warnings.push({
      code: 'unpricedInstance',
      message: `no price for ${cluster.instance.instanceType}: its hours count $0; give its price (prices.instances, --prices)`,
    });
  }
  return {
    chosen,
    warnings,
    choice: {
      label: chosen.label,
      ...(chosen.feedsGpus === undefined ? {} : { feedsGpus: chosen.feedsGpus }),
      dollarsPerJob: chosen.dollarsPerJob,
      dollarsPerMonth: chosen.dollarsPerMonth,
      ...(runnerUp ? { runnerUp: runnerUp.label, savingsPerMonth: runnerUp.dollarsPerMonth - chosen.dollarsPerMonth } : {}),
      reason,
    },
  };
}
