/**
 * A new segment survives a power loss after its 201 (issue 8, durability attack D): the name of a new file
 * lives in its folder, so the first chunk of a segment fsyncs the file and then the folders from the
 * segment's up to the data directory (the session's folder, and `sessions/` that gains it when the session
 * is new); later chunks fsync the file only. A power loss cannot be simulated here, so the test watches
 * the fsyncs themselves: `FileHandle.prototype.sync` is wrapped to record which path each synced
 * descriptor names (`/proc/self/fd`), behind the real app on loopback with the real local stores.
 */
import { mkdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import { writeSession } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk, storedSegmentPath } from '../support/stored.js';

const srv = useServer({ tenants: ['acme'] });

/** The paths synced since the last `take()`, in order. */
const synced: string[] = [];
const take = () => synced.splice(0);
let restore: (() => void) | null = null;

beforeAll(async () => {
  const fh = await open(join(srv.workDir, '..', 'probe'), 'w');
  const proto = Object.getPrototypeOf(fh) as { sync: FileHandle['sync'] };
  await fh.close();
  const real = proto.sync;
  proto.sync = function (this: FileHandle) {
    synced.push(readlinkSync(`/proc/self/fd/${this.fd}`));
    return Reflect.apply(real, this, []);
  } as FileHandle['sync'];
  restore = () => {
    proto.sync = real;
  };
});

afterAll(() => restore?.());

describe('fsync of a new segment', () => {
  it('the first chunk of a new session syncs the file, then its folder, the sessions folder and on up to the data directory; the next chunk only the file', async () => {
    const seg = writeSession(srv.workDir);
    const file = storedSegmentPath(srv, 'acme', seg.sid, seg.w);
    const sessionDir = dirname(file);
    const head = Buffer.concat(seg.lines.slice(0, 3));
    take();
    expect((await postChunk(srv, srv.admin, seg.sid, seg.w, 0, head)).status).toBe(201);
    const first = take();
    // The file first (its bytes), then the folders deepest first: the session's, and `sessions/`, which
    // gained the new session's folder.
    expect(first.slice(0, 3)).toEqual([file, sessionDir, dirname(sessionDir)]);
    expect(first.slice(3)).toEqual([dirname(dirname(sessionDir)), join(srv.dataDir, 'tenants'), srv.dataDir]);

    expect(
      (await postChunk(srv, srv.admin, seg.sid, seg.w, head.length, seg.bytes.subarray(head.length))).status,
    ).toBe(201);
    expect(take()).toEqual([file]);
  });

  it("a second writer's first chunk in an existing session syncs its file and its folder (and up); its retry, answered from the index, syncs nothing", async () => {
    const one = writeSession(srv.workDir);
    expect((await postChunk(srv, srv.admin, one.sid, one.w, 0, one.bytes)).status).toBe(201);
    const two = writeSession(srv.workDir, { sid: one.sid, agent: 'second' });
    const file = storedSegmentPath(srv, 'acme', two.sid, two.w);
    take();
    expect((await postChunk(srv, srv.admin, two.sid, two.w, 0, two.bytes)).status).toBe(201);
    expect(take().slice(0, 2)).toEqual([file, dirname(file)]);
    // The same chunk again is answered from the index (200): nothing is written, nothing synced.
    expect((await postChunk(srv, srv.admin, two.sid, two.w, 0, two.bytes)).status).toBe(200);
    expect(take()).toEqual([]);
  });

  it('the first chunk again over the bytes a crashed attempt left (not yet acknowledged) syncs the file and the folders', async () => {
    const store = new FsSegmentStore(srv.dataDir);
    const seg = writeSession(srv.workDir);
    const key = { tenant: 'acme', sid: seg.sid, w: seg.w };
    const file = store.pathOf(key);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, seg.bytes); // written, never synced nor indexed: the crash came before both
    take();
    await store.putChunk(key, 0, seg.bytes);
    expect(take().slice(0, 3)).toEqual([file, dirname(file), dirname(dirname(file))]);
  });
});
