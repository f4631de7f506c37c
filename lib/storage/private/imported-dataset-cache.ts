import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import type { ILustreDatasetCache, LustreDatasetCacheAttributes } from '../lustre-dataset-cache';

/** An FSx for Lustre file system made elsewhere: `LustreDatasetCache.fromAttributes`. */
export class ImportedDatasetCache extends Construct implements ILustreDatasetCache {
  public readonly fileSystemId: string;
  public readonly mountName: string;
  public readonly vpc: ec2.IVpc;
  public readonly subnet: ec2.ISubnet;
  public readonly linkedPaths: string[];
  public readonly connections: ec2.Connections;

  constructor(scope: Construct, id: string, attrs: LustreDatasetCacheAttributes) {
    super(scope, id);
    this.fileSystemId = attrs.fileSystemId;
    this.mountName = attrs.mountName;
    this.vpc = attrs.vpc;
    this.subnet = attrs.subnet;
    this.linkedPaths = attrs.linkedPaths ?? ['/'];
    this.connections = new ec2.Connections({ securityGroups: [attrs.securityGroup] });
  }
}
