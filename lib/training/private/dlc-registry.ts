import { RegionInfo } from 'aws-cdk-lib/region-info';

/**
 * Registry accounts of the AWS Deep Learning Containers for the regions where aws-cdk-lib's
 * `dlcRepositoryAccount` region fact has no value (aws-cdk-lib 2.276.0).
 *
 * Source: sagemaker-python-sdk `image_uri_config/pytorch.json` (training 2.8.0). We ship these
 * instead of calling `Fact.register`, which would mutate a process-wide table for every app.
 */
const ACCOUNTS_MISSING_FROM_REGION_FACT: Readonly<Record<string, string>> = {
  'af-south-1': '626614931356',
  'ap-northeast-3': '364406365360',
  'ap-southeast-5': '550225433462',
  'ap-southeast-7': '590183813437',
  'ca-west-1': '204538143572',
  'il-central-1': '780543022126',
  'mx-central-1': '637423239942',
  'us-gov-east-1': '446045086412',
  'us-gov-west-1': '442386744353',
};

/** Repository of the PyTorch training Deep Learning Containers in each registry account. */
export const PYTORCH_TRAINING_REPOSITORY = 'pytorch-training';

/** Deep Learning Container registry account by region, sorted by region name. */
export const DLC_REGISTRY_ACCOUNTS: Readonly<Record<string, string>> = buildRegistryTable();

function buildRegistryTable(): Record<string, string> {
  const accounts: Record<string, string> = { ...ACCOUNTS_MISSING_FROM_REGION_FACT };
  for (const region of RegionInfo.regions) {
    const account = region.dlcRepositoryAccount;
    if (account !== undefined) {
      accounts[region.name] = account;
    }
  }
  return Object.fromEntries(Object.entries(accounts).sort(([a], [b]) => a.localeCompare(b)));
}

/** Where the Deep Learning Container registry of one concrete region lives. */
export interface DlcRegistry {
  readonly account: string;
  readonly partition: string;
  /** Domain suffix of the region's endpoints, e.g. `amazonaws.com.cn`. */
  readonly urlSuffix: string;
}

/** The registry for a concrete region, or `undefined` when the region has no known registry. */
export function dlcRegistryFor(region: string): DlcRegistry | undefined {
  if (!Object.hasOwn(DLC_REGISTRY_ACCOUNTS, region)) {
    return undefined;
  }
  const { partition, domainSuffix } = RegionInfo.get(region);
  if (partition === undefined || domainSuffix === undefined) {
    return undefined;
  }
  return { account: DLC_REGISTRY_ACCOUNTS[region], partition, urlSuffix: domainSuffix };
}
