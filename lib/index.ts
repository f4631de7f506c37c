export * from './instances/data-loader-sizing';
export * from './instances/training-instance';
export * from './sharding/sharded-dataset';
export * from './training/metric-definition';
export * from './training/training-channel';
export * from './training/training-code';
export * from './training/training-container';
export * from './training/training-job';
