import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import type { ILustreDatasetCache, LustreDatasetCacheAttributes } from '../lustre-dataset-cache';

/**
 * An FSx for Lustre file system made elsewhere, for `LustreDatasetCache.fromAttributes`: a
 * construct at `id` (ids stay unique, as for any import) with what ILustreDatasetCache describes,
 * the linked paths defaulting to the root and the connections through the given security group.
 */
export function importDatasetCache(scope: Construct, id: string, attrs: LustreDatasetCacheAttributes): ILustreDatasetCache {
  const { fileSystemId, mountName, vpc, subnet, linkedPaths = ['/'], securityGroup } = attrs;
  const connections = new ec2.Connections({ securityGroups: [securityGroup] });
  return Object.assign(new Construct(scope, id), { fileSystemId, mountName, vpc, subnet, linkedPaths, connections });
}
