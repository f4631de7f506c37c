import type { ImagePreprocessor } from './image-preprocessor';

/** The members' bytes in plan order (the shard writer's reads); a buffer taken is valid until the next `take`. */
interface Reads {
  take(position: number): Buffer | Error | Promise<Buffer | Error>;
}

/**
 * Images preprocessed a few ahead of the writer, in plan order. One at a time, a shard writer
 * leaves a core idle whenever its pool has fewer shards left than threads (7 shards on 2 threads
 * packed at 1.29 times the speed of one, where sharp alone scaled 1.92 times), and on Lambda its
 * one shard would use one of the function's cores. Each result is the JPEG, the read's error, or
 * an UndecodableImageError; never a rejection, so that an image still in flight when the shard
 * fails cannot reject unheard. Memory: `ahead` images per writer. Reads in place take turns over
 * `ahead` readers, each with its own buffer, so that no file is copied: a copy per image left
 * megabytes of garbage outside the heap between collections (peak RSS 281-326 MB against 257-269
 * for one image at a time, 300 images of 2,500-4,000 px on 2 threads).
 */
export class PreprocessedReads implements Reads {
  private readonly inFlight = new Map<number, Promise<Buffer | Error>>();
  private next = 0;

  /**
   * `readers`: one that hands out a new buffer per file (reads ahead), or `ahead` that each read in
   * place, position p from `readers[p % ahead]`, whose buffer is reused only once p is taken.
   */
  constructor(private readonly readers: readonly Reads[], private readonly count: number, private readonly preprocessor: ImagePreprocessor,
    private readonly ahead: number) {}

  public take(position: number): Promise<Buffer | Error> {
    while (this.next < this.count && this.next < position + this.ahead) {
      this.inFlight.set(this.next, this.start(this.next));
      this.next++;
    }
    const result = this.inFlight.get(position)!;
    this.inFlight.delete(position);
    return result;
  }

  private start(position: number): Promise<Buffer | Error> {
    const taken = this.readers[position % this.readers.length].take(position);
    return Promise.resolve<Buffer | Error>(taken).then<Buffer | Error>(
      (input) => (Buffer.isBuffer(input) ? this.preprocessor.process(input) : input),
    ).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
  }
}
