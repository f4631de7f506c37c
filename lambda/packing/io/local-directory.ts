import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ListedFile, ObjectNotFoundError, ObjectWriter, PackingSink, PackingSource } from './storage';

/** A folder as the source of a packing run. Keys are `/`-separated paths relative to it. */
/**
 * A folder as the source of a packing run. Keys are `/`-separated paths relative to it.
 *
 * Listing and reading use synchronous calls on purpose: for many small files on a local disk,
 * one `readFile` promise costs four thread-pool round trips (open, fstat, read, close) and is
 * about 7× slower than the same calls made directly (measured: 30,000 files of 2–8 KB, 2.5 s
 * against 0.36 s). The shard writer still overlaps these reads with its asynchronous writes.
 */
export class LocalDirectorySource implements PackingSource {
  public readonly uri: string;
  private readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
    this.uri = directoryUri(this.root);
  }

  public async list(): Promise<ListedFile[]> {
    const files: ListedFile[] = [];
    const walked = new Set<string>();
    const walk = (relative: string): void => {
      // A link back to a folder already walked would loop forever.
      const real = fs.realpathSync(this.pathOf(relative));
      if (walked.has(real)) return;
      walked.add(real);
      for (const entry of fs.readdirSync(this.pathOf(relative), { withFileTypes: true })) {
        const key = relative ? `${relative}/${entry.name}` : entry.name;
        if (entry.isDirectory()) {
          walk(key);
          continue;
        }
        // stat follows symbolic links: a linked file is packed, a linked folder is walked. A link
        // that leads nowhere is still listed, so that reading it fails and it is reported, not dropped.
        const stats = fs.statSync(this.pathOf(key), { throwIfNoEntry: false });
        if (stats?.isDirectory()) {
          walk(key);
        } else if (!stats || stats.isFile()) {
          files.push({ key, size: stats?.size ?? 0, modified: stats ? Math.floor(stats.mtimeMs) : 0 });
        }
      }
    };
    walk('');
    return files;
  }

  public async read(key: string): Promise<Buffer> {
    const fd = fs.openSync(this.pathOf(key), 'r');
    try {
      // Sized by fstat, not by the listing: the file may have changed since.
      const data = Buffer.allocUnsafe(fs.fstatSync(fd).size);
      let filled = 0;
      while (filled < data.length) {
        const read = fs.readSync(fd, data, filled, data.length - filled, filled);
        if (read === 0) break;
        filled += read;
      }
      return filled === data.length ? data : data.subarray(0, filled);
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Keys are `/`-separated, which every platform's fs accepts; path.join per file cost more than the read. */
  private pathOf(key: string): string {
    return key ? `${this.root}/${key}` : this.root;
  }
}

/** A folder as the destination of a packing run: objects are files, written under a temporary name and renamed when complete. */
export class LocalDirectorySink implements PackingSink {
  public readonly uri: string;
  private readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
    this.uri = directoryUri(this.root);
  }

  public async create(key: string): Promise<ObjectWriter> {
    const target = await this.prepare(key);
    const partial = partialName(target);
    const handle = await fsp.open(partial, 'w');
    let closed = false;
    const close = async () => {
      if (!closed) {
        closed = true;
        await handle.close();
      }
    };
    return {
      write: async (chunks) => {
        let buffers = chunks;
        // writev may write fewer bytes than asked: continue from where it stopped.
        while (buffers.length > 0) {
          const { bytesWritten } = await handle.writev(buffers);
          buffers = remainder(buffers, bytesWritten);
        }
      },
      complete: async () => {
        await close();
        await fsp.rename(partial, target);
      },
      abort: async () => {
        await close();
        await fsp.rm(partial, { force: true });
      },
    };
  }

  public async put(key: string, data: Buffer): Promise<void> {
    const target = await this.prepare(key);
    const partial = partialName(target);
    await fsp.writeFile(partial, data);
    await fsp.rename(partial, target);
  }

  public get(key: string): Promise<Buffer> {
    return fsp.readFile(this.pathOf(key)).catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new ObjectNotFoundError(`${this.uri}${key}`, error.code, error.message) : error;
    });
  }

  public async list(prefix: string): Promise<string[]> {
    const entries = await fsp.readdir(this.pathOf(prefix), { recursive: true, withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    return entries.filter((entry) => entry.isFile())
      .map((entry) => path.relative(this.root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
  }

  public delete(key: string): Promise<void> {
    return fsp.rm(this.pathOf(key), { force: true });
  }

  private async prepare(key: string): Promise<string> {
    const target = this.pathOf(key);
    await fsp.mkdir(path.dirname(target), { recursive: true });
    return target;
  }

  private pathOf(key: string): string {
    return path.join(this.root, ...key.split('/'));
  }
}

function directoryUri(root: string): string {
  const uri = pathToFileURL(root).href;
  return uri.endsWith('/') ? uri : `${uri}/`;
}

/** A hidden sibling name, unique per writer, so a crash leaves no object under the real key. */
function partialName(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.partial`);
}

function remainder(buffers: Buffer[], written: number): Buffer[] {
  let skip = written;
  const rest: Buffer[] = [];
  for (const buffer of buffers) {
    if (skip >= buffer.length) {
      skip -= buffer.length;
    } else {
      rest.push(skip > 0 ? buffer.subarray(skip) : buffer);
      skip = 0;
    }
  }
  return rest;
}
