/**
 * Hostile storage (issue 8, item 1): what the service answers when its own disk misbehaves, with the
 * faults injected into the real local stores (a FileHandle whose write comes back short or fails with an
 * errno, a better-sqlite3 `SqliteError` from the state store) behind the real app on loopback. The same
 * faults from a real filesystem are test/durability/disk-full.test.ts. Each case names its row of
 * docs/api.md "Hostile storage"; the last test checks the table against the cases.
 *
 * Every refusal leaves the writer's index as it was and the segment file at its indexed length, the next
 * chunk at the same offset is accepted once the fault is gone, and the server still answers /healthz.
 */
import { readFileSync, statSync, truncateSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTenant } from '../../lib/service/index.js';
import { FsDigestStore } from '../../lib/store/fs/digest-store.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import type { WriterAdvance } from '../../lib/store/index.js';
import { SqliteStateStore } from '../../lib/store/sqlite/state-store.js';
import { docRows } from '../support/doc-rows.js';
import { type Answer, expectError, request } from '../support/http.js';
import { type LocalSegment, writeSession } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk, storedSegmentPath } from '../support/stored.js';

/**
 * What the next writes to any file handle do: `short` stores half of the first write (and reports it),
 * `{shortThen}` does that and fails the next with the errno, `{fail}` fails the first. Installed on
 * FileHandle.prototype (only the segment store writes through file handles in this process), so it
 * reaches the store without a seam and the cases also run on code that has none.
 */
type WritePlan = 'short' | { shortThen: string } | { fail: string };
let writePlan: WritePlan | null = null;
let restoreWrite: (() => void) | null = null;

async function installWritePlans(scratch: string): Promise<void> {
  const fh = await open(join(scratch, 'probe'), 'w');
  const proto = Object.getPrototypeOf(fh) as { write: FileHandle['write'] };
  await fh.close();
  const real = proto.write;
  proto.write = async function (this: FileHandle, ...args: unknown[]) {
    const plan = writePlan;
    const [buf, offset, length] = args as [Uint8Array, number, number];
    if (plan === null || !(buf instanceof Uint8Array)) return Reflect.apply(real, this, args);
    if (typeof plan === 'object' && 'fail' in plan) {
      writePlan = null;
      throw errnoError(plan.fail, 'write');
    }
    writePlan = plan === 'short' ? null : { fail: plan.shortThen };
    return Reflect.apply(real, this, [buf, offset, Math.max(1, Math.floor(length / 2))]); // a short write
  } as FileHandle['write'];
  restoreWrite = () => {
    proto.write = real;
  };
}

function errnoError(code: string, syscall: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected by the test, ${syscall}`), { code, syscall });
}

/** The real FsSegmentStore, whose next open can be made to fail once (through its `openFile` seam). */
class FaultyFs extends FsSegmentStore {
  openError: string | null = null;

  protected override async openFile(path: string, flags: string): Promise<FileHandle> {
    const openError = this.openError;
    this.openError = null;
    if (openError) throw errnoError(openError, 'open');
    return super.openFile(path, flags);
  }
}

/** The real SqliteStateStore, whose next call of one method can fail with a SQLite code. */
class FaultyState extends SqliteStateStore {
  fail: { method: 'advanceWriter' | 'putStatus' | 'touchToken'; code: string } | null = null;

  private take(method: string): void {
    const f = this.fail;
    if (f?.method !== method) return;
    this.fail = null;
    throw new Database.SqliteError(`injected by the test: ${f.code}`, f.code);
  }
  override async advanceWriter(t: string, s: string, w: string, from: number, next: WriterAdvance) {
    this.take('advanceWriter');
    return super.advanceWriter(t, s, w, from, next);
  }
  override async putStatus(status: Parameters<SqliteStateStore['putStatus']>[0]) {
    this.take('putStatus');
    return super.putStatus(status);
  }
  override async touchToken(hash: string, at: string) {
    this.take('touchToken');
    return super.touchToken(hash, at);
  }
}

/** The stores the app serves, with their faults to set. */
let faulty: { fs: FaultyFs; state: FaultyState };
const srv = useServer({
  tenants: ['acme'],
  stores: (dataDir) => {
    faulty = { fs: new FaultyFs(dataDir), state: new FaultyState(':memory:') };
    return { segments: faulty.fs, state: faulty.state, digests: new FsDigestStore(dataDir) };
  },
  // A storage fault is answered and logged on purpose (the operator's detail): nothing else may be.
  mayLog: /^answered \d{3} [a-z_]+/,
});

beforeAll(async () => {
  await installWritePlans(dirname(srv.dataDir));
});

afterAll(() => {
  restoreWrite?.();
});

/** A fresh open segment whose first chunk (its first three lines) is stored; `rest` is the next chunk. */
async function started(): Promise<{ seg: LocalSegment; at: number; rest: Buffer }> {
  const seg = writeSession(srv.workDir, { open: true });
  const head = Buffer.concat(seg.lines.slice(0, 3));
  expect((await postChunk(srv, srv.admin, seg.sid, seg.w, 0, head)).status).toBe(201);
  return { seg, at: head.length, rest: Buffer.concat(seg.lines.slice(3)) };
}

const fileSize = (seg: LocalSegment) => statSync(storedSegmentPath(srv, 'acme', seg.sid, seg.w)).size;
const writerOf = (seg: LocalSegment) =>
  request(srv, 'GET', `/v1/sessions/${seg.sid}/writers/${seg.w}`, { token: srv.admin });

/**
 * A chunk refused by a fault: the answer, then nothing acknowledged (index and file at `at`, or the file
 * longer only by bytes past the index when the index write failed), then the same chunk accepted.
 */
async function refusedThenAccepted(
  inject: () => void,
  opts: { bytesPastIndex?: boolean } = {},
): Promise<Answer> {
  const { seg, at, rest } = await started();
  inject();
  const a = await postChunk(srv, srv.admin, seg.sid, seg.w, at, rest);
  expect((await writerOf(seg)).json.length).toBe(at);
  if (opts.bytesPastIndex) expect(fileSize(seg)).toBeGreaterThanOrEqual(at);
  else expect(fileSize(seg)).toBe(at);
  const again = await postChunk(srv, srv.admin, seg.sid, seg.w, at, rest);
  expect(again.status, again.text).toBe(201);
  expect(readFileSync(storedSegmentPath(srv, 'acme', seg.sid, seg.w)).equals(seg.bytes)).toBe(true);
  return a;
}

interface Case {
  name: string;
  /** the row of docs/api.md "Hostile storage" */
  row: string;
  status: number;
  code?: string;
  run: () => Promise<Answer>;
  check?: (a: Answer) => void;
}

const ROW = {
  short: 'chunk: a write of the segment file stores fewer bytes than asked (a short write)',
  full: 'chunk: the disk fills up while the chunk is written (a short write, then ENOSPC or EDQUOT)',
  readOnly: 'chunk: the segment files are on a read-only filesystem (EROFS)',
  permission: 'chunk: the server may not write its data directory (EACCES, EPERM)',
  stateFull: 'chunk or status report: the state database cannot grow (SQLITE_FULL)',
  stateReadOnly: 'status report: the state database is read-only (SQLITE_READONLY)',
  touch: "any request: the token's last use cannot be recorded (a full or read-only database)",
  lost: 'read of a segment whose file is shorter than its index: the writer, the segment download, the replay (ndjson, text, raw), inspect, attribution',
  lostVerify: 'verify of a session with such a segment',
  lostChunk: 'chunk to a writer whose file is shorter than its index',
};

const expectExpectedOffset = (a: Answer) =>
  expect(Object.keys(a.json.error.details)).toEqual(['expected_offset']);

const CASES: Case[] = [
  {
    name: 'a short write is completed before the 201',
    row: ROW.short,
    status: 201,
    run: async () => {
      const { seg, at, rest } = await started();
      writePlan = 'short';
      const a = await postChunk(srv, srv.admin, seg.sid, seg.w, at, rest);
      expect(fileSize(seg)).toBe(seg.bytes.length);
      expect(readFileSync(storedSegmentPath(srv, 'acme', seg.sid, seg.w)).equals(seg.bytes)).toBe(true);
      return a;
    },
  },
  ...['ENOSPC', 'EDQUOT'].map(
    (code): Case => ({
      name: `a short write, then ${code}: 507, cut back, and the same chunk taken later`,
      row: ROW.full,
      status: 507,
      code: 'insufficient_storage',
      run: () => refusedThenAccepted(() => (writePlan = { shortThen: code })),
      check: (a) => {
        expectExpectedOffset(a);
        expect(a.json.error.message).toMatch(/disk is full: nothing of this chunk was stored/);
      },
    }),
  ),
  {
    name: 'EROFS on write: 503',
    row: ROW.readOnly,
    status: 503,
    code: 'storage_read_only',
    run: () => refusedThenAccepted(() => (writePlan = { fail: 'EROFS' })),
    check: expectExpectedOffset,
  },
  {
    name: 'EACCES on open: 500 storage_permission_denied',
    row: ROW.permission,
    status: 500,
    code: 'storage_permission_denied',
    run: () => refusedThenAccepted(() => (faulty.fs.openError = 'EACCES')),
    check: (a) => expect(a.json.error.message).toMatch(/must fix the permissions of its data directory/),
  },
  {
    name: 'EPERM on write: 500 storage_permission_denied',
    row: ROW.permission,
    status: 500,
    code: 'storage_permission_denied',
    run: () => refusedThenAccepted(() => (writePlan = { fail: 'EPERM' })),
  },
  {
    name: 'SQLITE_FULL when the index advances: 507, and the retry is taken',
    row: ROW.stateFull,
    status: 507,
    code: 'insufficient_storage',
    run: () =>
      refusedThenAccepted(() => (faulty.state.fail = { method: 'advanceWriter', code: 'SQLITE_FULL' }), {
        bytesPastIndex: true,
      }),
    check: expectExpectedOffset,
  },
  {
    name: 'SQLITE_FULL storing a status report: 507',
    row: ROW.stateFull,
    status: 507,
    code: 'insufficient_storage',
    run: async () => {
      const { seg } = await started();
      faulty.state.fail = { method: 'putStatus', code: 'SQLITE_FULL' };
      return request(srv, 'POST', `/v1/sessions/${seg.sid}/status`, {
        token: srv.admin,
        json: { state: 'working', note: 'on a full disk' },
      });
    },
    check: (a) => expect(a.json.error.message).toMatch(/nothing of this request was stored/),
  },
  {
    name: 'SQLITE_READONLY storing a status report: 503',
    row: ROW.stateReadOnly,
    status: 503,
    code: 'storage_read_only',
    run: async () => {
      const { seg } = await started();
      faulty.state.fail = { method: 'putStatus', code: 'SQLITE_READONLY' };
      return request(srv, 'POST', `/v1/sessions/${seg.sid}/status`, {
        token: srv.admin,
        json: { state: 'working', note: 'on a read-only disk' },
      });
    },
  },
  {
    name: 'touchToken fails with SQLITE_READONLY: the read is answered',
    row: ROW.touch,
    status: 200,
    run: async () => {
      const { seg } = await started();
      const fresh = (await ensureTenant(faulty.state, `t-${Date.now()}`, new Date()))!.token;
      faulty.state.fail = { method: 'touchToken', code: 'SQLITE_READONLY' };
      const a = await request(srv, 'GET', '/v1/sessions', { token: fresh });
      expect(faulty.state.fail).toBeNull(); // the fault was met
      expect((await writerOf(seg)).status).toBe(200);
      return a;
    },
  },
  ...(
    [
      'writers/W',
      'writers/W/segment',
      'replay',
      'replay?format=text',
      'replay?raw=1',
      'inspect',
      'attribution',
    ] as const
  ).map(
    (tail): Case => ({
      name: `a file cut behind the server's back: GET …/${tail} is 500 data_loss`,
      row: ROW.lost,
      status: 500,
      code: 'data_loss',
      run: async () => {
        const { seg, at, rest } = await started();
        expect((await postChunk(srv, srv.admin, seg.sid, seg.w, at, rest)).status).toBe(201);
        truncateSync(storedSegmentPath(srv, 'acme', seg.sid, seg.w), at - 7);
        const path = `/v1/sessions/${seg.sid}/${tail.replace('W', seg.w)}`;
        const a = await request(srv, 'GET', path, { token: srv.admin });
        expect(a.json.error.details).toEqual({ w: seg.w, range: { start: at - 7, end: seg.bytes.length } });
        return a;
      },
    }),
  ),
  {
    name: 'verify of a file cut behind the server’s back: ok false, data_loss with its range',
    row: ROW.lostVerify,
    status: 200,
    run: async () => {
      const { seg, at } = await started();
      truncateSync(storedSegmentPath(srv, 'acme', seg.sid, seg.w), 10);
      const a = await request(srv, 'GET', `/v1/sessions/${seg.sid}/verify`, { token: srv.admin });
      expect(a.json.ok).toBe(false);
      expect(a.json.problems).toContainEqual(
        expect.objectContaining({
          code: 'data_loss',
          severity: 'error',
          w: seg.w,
          range: { start: 10, end: at },
        }),
      );
      return a;
    },
  },
  {
    name: 'a chunk to a writer whose file was cut: 500 data_loss, not 409',
    row: ROW.lostChunk,
    status: 500,
    code: 'data_loss',
    run: async () => {
      const { seg, at, rest } = await started();
      truncateSync(storedSegmentPath(srv, 'acme', seg.sid, seg.w), 10);
      return postChunk(srv, srv.admin, seg.sid, seg.w, at, rest);
    },
  },
];

describe('hostile storage', () => {
  for (const c of CASES) {
    it(`${c.name}: ${c.status}${c.code ? ` ${c.code}` : ''}`, async () => {
      const a = await c.run();
      if (c.code) {
        const err = expectError(srv, a, c.status, c.code);
        expect(err.message).not.toContain(srv.dataDir);
        // The operator's detail is in the server's log.
        expect(srv.logged.at(-1)).toMatch(new RegExp(`^answered ${c.status} ${c.code}`));
      } else expect(a.status, a.text).toBe(c.status);
      c.check?.(a);
      expect((await request(srv, 'GET', '/healthz')).status).toBe(200);
    });
  }

  it('every case’s answer is the one docs/api.md "Hostile storage" gives for its row', () => {
    const rows = docRows(new URL('../../docs/api.md', import.meta.url), 'Hostile storage');
    for (const c of CASES) {
      const answer = rows.get(c.row);
      expect(answer, `docs/api.md has no Hostile storage row "${c.row}"`).toBeDefined();
      expect(answer!.includes(String(c.status)), `${c.name}: ${answer}`).toBe(true);
      if (c.code) expect(answer!.includes(`\`${c.code}\``), `${c.name}: ${answer}`).toBe(true);
    }
    const used = new Set(CASES.map((c) => c.row));
    expect([...rows.keys()].filter((r) => !used.has(r))).toEqual([]);
  });
});
