/** Where `CacheSource.fromShards` links a packed dataset in the file system: its root, every version under it. */
export const DATASET_CACHE_DIRECTORY = 'dataset';
