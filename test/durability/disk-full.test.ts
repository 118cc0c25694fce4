/**
 * Never acknowledge what is not stored (issue 8, item 1), against the real `hansard serve` process on a
 * real filesystem: a small tmpfs as its data directory fills up, is remounted read-only, or belongs to
 * another user than the server's. Every 201 must mean the bytes are on disk; a refusal must leave the
 * segment at its indexed length and the writer able to go on; reads must stay right. The tests mount
 * tmpfs, so they need root (CI runs them as root); without it they are skipped, saying so, and
 * test/http/hostile-storage.test.ts still covers the same answers with injected faults.
 */
import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statfsSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServeProcess } from '../../harness/serve-process.js';
import { tmpfsMounts } from '../support/tmpfs.js';
import { call, chunkedSegment, postChunk } from './segment-chunks.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-disk-'));
const tmpfs = tmpfsMounts();
const servers: ServeProcess[] = [];

const mountTmpfs = (dir: string, size: string) => tmpfs.mount(dir, size);

const probe = join(root, 'probe');
const cannotMount = mountTmpfs(probe, '64k');
const skipReason = cannotMount && `mounting a tmpfs is not permitted here (${cannotMount}): run as root`;

afterAll(async () => {
  for (const s of servers) await s.close();
  tmpfs.unmountAll();
  rmSync(root, { recursive: true, force: true });
});

async function serve(data: string, opts: { withoutDacOverride?: boolean } = {}): Promise<ServeProcess> {
  const s = await startServeProcess({ dataDir: data, ...opts });
  servers.push(s);
  return s;
}

/** Bytes free on the filesystem of `dir`. */
function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

/** Fills the filesystem of `dir` with `path` until at most `leave` bytes are free (0: until ENOSPC). */
function fill(path: string, dir: string, leave: number): void {
  if (leave > 0) {
    writeFileSync(path, Buffer.alloc(Math.max(0, freeBytes(dir) - leave)));
    return;
  }
  const piece = Buffer.alloc(4096);
  try {
    for (;;) writeFileSync(path, piece, { flag: 'a' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
}

const segmentFile = (data: string, sid: string, w: string) =>
  join(data, 'tenants', 'local', 'sessions', sid, `${w}.jsonl`);

describe.skipIf(skipReason !== null)(`a full disk${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  it('acknowledges only what is on disk, answers 507 for the chunk that does not fit, and takes it once there is room', async () => {
    // The segment folder on its own small disk, as in the issue: the index (SQLite) still has room.
    const data = join(root, 'full');
    const tenants = join(data, 'tenants');
    expect(mountTmpfs(tenants, '1m')).toBeNull();
    const srv = await serve(data);
    const seg = chunkedSegment(join(root, 'work-full'), 640 * 1024, 48 * 1024);
    const file = segmentFile(data, seg.sid, seg.w);
    const first = await postChunk(srv.url, srv.admin, seg, 0, seg.chunks[0]!);
    expect(first.status).toBe(201);

    // Leave room for two or three chunks (and the index's own writes), then send until one does not fit.
    const filler = join(tenants, 'filler.bin');
    fill(filler, tenants, 160 * 1024);
    let acked = seg.chunks[0]!.length;
    let refused: Awaited<ReturnType<typeof postChunk>> | null = null;
    let i = 1;
    let freeBefore = 0;
    for (; i < seg.chunks.length; i++) {
      freeBefore = freeBytes(tenants);
      const a = await postChunk(srv.url, srv.admin, seg, acked, seg.chunks[i]!);
      if (a.status !== 201) {
        refused = a;
        break;
      }
      acked += seg.chunks[i]!.length;
    }
    expect(i, 'some chunks fit before the disk was full').toBeGreaterThan(1);
    expect(refused?.status, JSON.stringify(refused?.json)).toBe(507);
    expect(refused!.json.error!.code).toBe('insufficient_storage');
    expect(refused!.json.error!.message).toMatch(/disk is full: nothing of this chunk was stored/);
    expect(refused!.json.error!.details).toEqual({ expected_offset: acked });
    // The disk had room for part of it: the write came back short, then failed (the case of the issue).
    expect(freeBefore).toBeGreaterThan(0);
    expect(freeBefore).toBeLessThan(seg.chunks[i]!.length);

    // Every 201 is on disk, and nothing of the refused chunk is.
    expect(statSync(file).size).toBe(acked);
    expect(readFileSync(file).equals(seg.bytes.subarray(0, acked))).toBe(true);
    const writer = await call(srv.url, srv.admin, 'GET', `/v1/sessions/${seg.sid}/writers/${seg.w}`);
    expect(writer.status).toBe(200);
    expect(writer.json.length).toBe(acked);
    const download = await call(
      srv.url,
      srv.admin,
      'GET',
      `/v1/sessions/${seg.sid}/writers/${seg.w}/segment`,
    );
    expect(download.status).toBe(200);
    expect(download.bytes.equals(seg.bytes.subarray(0, acked))).toBe(true);
    const verify = await call(srv.url, srv.admin, 'GET', `/v1/sessions/${seg.sid}/verify`);
    expect(verify.status).toBe(200);
    expect(verify.json.ok).toBe(true);

    // Still full: the same chunk is refused the same way, never a 409 that sends the writer in circles.
    const again = await postChunk(srv.url, srv.admin, seg, acked, seg.chunks[i]!);
    expect(again.status).toBe(507);
    expect(statSync(file).size).toBe(acked);

    // Room again: the same chunk at the same offset is taken, and the rest after it.
    unlinkSync(filler);
    for (; i < seg.chunks.length; i++) {
      const a = await postChunk(srv.url, srv.admin, seg, acked, seg.chunks[i]!);
      expect(a.status, JSON.stringify(a.json)).toBe(201);
      acked += seg.chunks[i]!.length;
    }
    expect(acked).toBe(seg.bytes.length);
    expect(readFileSync(file).equals(seg.bytes)).toBe(true);
    const raw = await call(srv.url, srv.admin, 'GET', `/v1/sessions/${seg.sid}/replay?raw=1`);
    expect(raw.status).toBe(200);
    expect(raw.bytes.equals(seg.bytes)).toBe(true);
    const replay = await call(srv.url, srv.admin, 'GET', `/v1/sessions/${seg.sid}/replay`);
    expect(replay.status).toBe(200);
    expect(replay.bytes.toString('utf8').split('\n').length - 1).toBe(
      seg.bytes.toString('utf8').split('\n').length - 1,
    );
    expect((await call(srv.url, srv.admin, 'GET', `/v1/sessions/${seg.sid}/verify`)).json.ok).toBe(true);
    // The operator finds the cause in the server's log.
    expect(srv.stderr()).toMatch(/answered 507 insufficient_storage.*ENOSPC/s);
  });

  it('answers 507 when the whole data directory is full (the state database cannot grow either), and reads still work', async () => {
    const data = join(root, 'state-full');
    expect(mountTmpfs(data, '4m')).toBeNull();
    const srv = await serve(data);
    const seg = chunkedSegment(join(root, 'work-state-full'), 64 * 1024, 32 * 1024);
    expect((await postChunk(srv.url, srv.admin, seg, 0, seg.chunks[0]!)).status).toBe(201);
    const filler = join(data, 'filler.bin');
    fill(filler, data, 0);

    const status = await call(
      srv.url,
      srv.admin,
      'POST',
      `/v1/sessions/${seg.sid}/status`,
      Buffer.from(JSON.stringify({ state: 'working', note: 'filling the disk' })),
    );
    expect(status.status, JSON.stringify(status.json)).toBe(507);
    expect(status.json.error!.code).toBe('insufficient_storage');
    expect(status.json.error!.message).toMatch(/nothing of this request was stored/);
    const chunk = await postChunk(srv.url, srv.admin, seg, seg.chunks[0]!.length, seg.chunks[1]!);
    expect(chunk.status).toBe(507);
    const replay = await call(srv.url, srv.admin, 'GET', `/v1/sessions/${seg.sid}/replay?raw=1`);
    expect(replay.status).toBe(200);
    expect(replay.bytes.equals(seg.chunks[0]!)).toBe(true);
    expect(srv.stderr()).toMatch(/answered 507 insufficient_storage.*SQLITE_FULL/s);

    unlinkSync(filler);
    expect((await postChunk(srv.url, srv.admin, seg, seg.chunks[0]!.length, seg.chunks[1]!)).status).toBe(
      201,
    );
  });

  it('answers 503 storage_read_only while the segments are on a read-only filesystem, and takes the chunk once it is writable', async () => {
    const data = join(root, 'ro');
    const tenants = join(data, 'tenants');
    expect(mountTmpfs(tenants, '1m')).toBeNull();
    const srv = await serve(data);
    const seg = chunkedSegment(join(root, 'work-ro'), 64 * 1024, 24 * 1024);
    const [c0, c1] = [seg.chunks[0]!, seg.chunks[1]!];
    expect((await postChunk(srv.url, srv.admin, seg, 0, c0)).status).toBe(201);

    execFileSync('mount', ['-o', 'remount,ro', tenants]);
    try {
      const refused = await postChunk(srv.url, srv.admin, seg, c0.length, c1);
      expect(refused.status, JSON.stringify(refused.json)).toBe(503);
      expect(refused.json.error!.code).toBe('storage_read_only');
      expect(refused.json.error!.message).toMatch(/read-only: nothing of this chunk was stored/);
      expect(refused.json.error!.message).not.toContain(data);
      // Reading still works.
      const replay = await call(srv.url, srv.admin, 'GET', `/v1/sessions/${seg.sid}/replay?raw=1`);
      expect(replay.status).toBe(200);
      expect(replay.bytes.equals(c0)).toBe(true);
      expect(srv.stderr()).toMatch(/answered 503 storage_read_only.*EROFS/s);
    } finally {
      execFileSync('mount', ['-o', 'remount,rw', tenants]);
    }
    expect((await postChunk(srv.url, srv.admin, seg, c0.length, c1)).status).toBe(201);
    expect(statSync(segmentFile(data, seg.sid, seg.w)).size).toBe(c0.length + c1.length);
  });
});

describe('a data directory the server may not write to', () => {
  it('answers 500 storage_permission_denied, naming no path, and takes the chunk once the permissions are fixed', async () => {
    const data = join(root, 'perm');
    mkdirSync(data, { recursive: true });
    // The server runs as root without the power to ignore permissions; its tenants folder then belongs to
    // nobody (0755), as after a restore by the wrong user.
    const srv = await serve(data, { withoutDacOverride: true });
    const seg = chunkedSegment(join(root, 'work-perm'), 16 * 1024, 64 * 1024);
    mkdirSync(join(data, 'tenants'), { recursive: true, mode: 0o755 });
    execFileSync('chown', ['nobody:nogroup', join(data, 'tenants')]);

    const refused = await postChunk(srv.url, srv.admin, seg, 0, seg.chunks[0]!);
    expect(refused.status, JSON.stringify(refused.json)).toBe(500);
    expect(refused.json.error!.code).toBe('storage_permission_denied');
    expect(refused.json.error!.message).toMatch(/must fix the permissions of its data directory/);
    expect(refused.json.error!.message).not.toContain(data);
    expect(refused.json.error!.message).not.toContain(seg.sid);
    expect(srv.stderr()).toMatch(/answered 500 storage_permission_denied.*EACCES/s);
    const writer = await call(srv.url, srv.admin, 'GET', `/v1/sessions/${seg.sid}/writers/${seg.w}`);
    expect(writer.status).toBe(404);

    execFileSync('chown', ['-R', 'root:root', join(data, 'tenants')]);
    expect((await postChunk(srv.url, srv.admin, seg, 0, seg.chunks[0]!)).status).toBe(201);
  });
});
