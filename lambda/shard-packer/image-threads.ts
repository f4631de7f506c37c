import sharp from 'sharp';

/**
 * How the packer spreads resizing over its vCPUs (Lambda gives one vCPU's worth of time per
 * 1,769 MB, lib/contract/image-preprocessing-limits.ts): several images at once, one libvips thread
 * each. sharp runs each image on libuv's thread pool, whose size the construct sets to the
 * function's vCPUs (`UV_THREADPOOL_SIZE`, at least Node's 4); the engine keeps that many and more
 * in flight (it reads ahead `READ_CONCURRENCY` files). One thread per image because a shard's
 * images are small (~100 KB JPEGs, a few milliseconds each): libvips splits one image's work into
 * strips of the output, too few on a small image to keep several threads busy, and sharp's default
 * (a thread per core for every image) would run vCPUs × pool threads on a few vCPUs.
 */
export function resizeOneImagePerThread(): void {
  sharp.concurrency(1);
}
