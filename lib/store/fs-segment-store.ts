/**
 * `FsSegmentStore`: segments as appended files, `{data}/tenants/{tenant}/sessions/{sid}/{w}.jsonl`
 * (DESIGN §5), the seed's on-disk layout under a tenant folder. For one server process: appends to one
 * writer are serialized by an in-process mutex (the state store's conditional advance guards the index).
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Mutex } from 'async-mutex';
import { assertSegmentKey } from './keys.js';
import { ChunkConflictError, type SegmentKey, type SegmentStore } from './ports.js';

export class FsSegmentStore implements SegmentStore {
  private readonly locks = new Map<string, Mutex>();

  /** @param root the data directory (`hansard serve --data`) */
  constructor(private readonly root: string) {}

  /** The file of a segment. @throws TypeError for an invalid key */
  pathOf(key: SegmentKey): string {
    assertSegmentKey(key);
    return join(this.root, 'tenants', key.tenant, 'sessions', key.sid, `${key.w}.jsonl`);
  }

  async putChunk(key: SegmentKey, offset: number, bytes: Uint8Array): Promise<void> {
    const path = this.pathOf(key);
    const lock = this.lockFor(path);
    await lock.runExclusive(async () => {
      await mkdir(dirname(path), { recursive: true });
      const fh = await open(path, 'a+');
      try {
        const size = (await fh.stat()).size;
        if (size < offset) {
          throw new ChunkConflictError(`segment holds ${size} bytes, fewer than the offset ${offset}`);
        }
        if (size > offset) {
          // Bytes past the indexed length were never acknowledged (a crash before the index advanced).
          const there = Buffer.alloc(Math.min(bytes.length, size - offset));
          await fh.read(there, 0, there.length, offset);
          if (there.length === bytes.length && there.equals(bytes)) {
            if (size > offset + bytes.length) await fh.truncate(offset + bytes.length);
            return;
          }
          await fh.truncate(offset);
        }
        await fh.write(bytes, 0, bytes.length);
        await fh.sync();
      } finally {
        await fh.close();
      }
    });
  }

  async *readSegment(
    key: SegmentKey,
    end: number,
    start = 0,
    chunkBytes = 256 * 1024,
  ): AsyncIterable<Uint8Array> {
    if (end <= start) return;
    const path = this.pathOf(key);
    let size = 0;
    try {
      size = (await stat(path)).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    // The index says these bytes were accepted: a shorter file is data loss, and must be loud.
    if (size < end) throw new Error(`segment ${key.sid}/${key.w} is missing bytes [${size}, ${end})`);
    yield* createReadStream(path, { start, end: end - 1, highWaterMark: chunkBytes });
  }

  private lockFor(path: string): Mutex {
    let m = this.locks.get(path);
    if (!m) {
      m = new Mutex();
      this.locks.set(path, m);
    }
    return m;
  }
}
