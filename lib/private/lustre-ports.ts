import * as ec2 from 'aws-cdk-lib/aws-ec2';

/** The ports Lustre uses: TCP 988 and 1018–1023 (FSx for Lustre guide, "File system access control with Amazon VPC"). */
export const LUSTRE_PORTS: readonly ec2.Port[] = [ec2.Port.tcp(988), ec2.Port.tcpRange(1018, 1023)];
