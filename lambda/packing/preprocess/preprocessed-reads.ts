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
 * fails cannot reject unheard. Memory: `ahead` images per writer.
 */
export class PreprocessedReads implements Reads {
  private readonly inFlight = new Map<number, Promise<Buffer | Error>>();
  private next = 0;

  constructor(private readonly reads: Reads, private readonly count: number, private readonly preprocessor: ImagePreprocessor,
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
    const taken = this.reads.take(position);
    // A buffer read in place is reused by the next read: the image keeps a copy while it is worked on.
    const data = taken instanceof Promise ? taken : Buffer.isBuffer(taken) ? Buffer.from(taken) : taken;
    return Promise.resolve<Buffer | Error>(data).then<Buffer | Error>(
      (input) => (Buffer.isBuffer(input) ? this.preprocessor.process(input) : input),
    ).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
  }
}
