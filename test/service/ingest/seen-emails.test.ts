/**
 * Person ids seen by email (issue 29 item 4, lib/service/ingest/seen-emails.ts): a chunk whose
 * `participant.join` carries `email` puts the join's user_id in `seen_user_ids` of the tenant's person
 * record for that email, once the chunk is stored; a bad email is ignored (the chunk still stored); two
 * tenants never mix; a failed write is logged, never fails the chunk, and the next join tries again.
 * Through the real `ingestChunk` over a real SQLite state store and a file segment store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_LINKED_IDS } from '../../../lib/contract/sign-in.js';
import { newId } from '../../../lib/log/format/ids.js';
import { openSession } from '../../../lib/log/write/writer.js';
import { ingestChunk } from '../../../lib/service/ingest/ingest-chunk.js';
import { emailClaimsOf, MAX_CLAIMS_PER_CHUNK, SEEN_BY } from '../../../lib/service/ingest/seen-emails.js';
import type { ServiceContext } from '../../../lib/service/shared/context.js';
import { updatePerson } from '../../../lib/service/sign-in/records.js';
import { FsSegmentStore } from '../../../lib/store/fs/segment-store.js';
import { StateConflictError, type StateStore } from '../../../lib/store/index.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { tokenRecord } from '../../store/contract/records.js';
import { readLocal } from '../../support/segments.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-seen-emails-'));
const opened: SqliteStateStore[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
  rmSync(root, { recursive: true, force: true });
});
afterEach(() => vi.restoreAllMocks());

const NOW = new Date('2026-12-07T12:00:00.000Z');

/** A data directory with its stores, and a context per tenant (an ingest token of that tenant). */
function world() {
  const dir = mkdtempSync(join(root, 'data-'));
  const state = new SqliteStateStore(join(dir, 'state.sqlite'));
  opened.push(state);
  const segments = new FsSegmentStore(dir);
  const ctxOf = (tenant: string, over: Partial<ServiceContext> = {}): ServiceContext => ({
    tenant,
    caller: tokenRecord(tenant, { scopes: ['ingest', 'read'] }),
    segments,
    state,
    now: () => NOW,
    ...over,
  });
  return { dir, state, segments, ctxOf };
}

/** A whole segment written by the library writer: writer.start, the joins given, a message, writer.end. */
function segment(dir: string, joins: Array<{ user_id: string; extra?: Record<string, unknown> }>) {
  const s = openSession(mkdtempSync(join(dir, 'seg-')), { sid: newId('s'), agent: 'claude-code' });
  for (const j of joins) s.participantJoin({ user_id: j.user_id }, j.extra ? { extra: j.extra } : {});
  s.message({ user_id: joins[0]?.user_id ?? 'someone', text: 'fix the flaky test' });
  s.end({ reason: 'done' });
  return readLocal({ sid: s.sid, w: s.w, dir: s.dir, path: s.path });
}

async function ingestWhole(ctx: ServiceContext, seg: ReturnType<typeof segment>) {
  return ingestChunk({ ctx, input: { sid: seg.sid, w: seg.w, offset: 0, body: seg.bytes } });
}

describe('a join that carries an email', () => {
  it("puts the join's user_id in seen_user_ids of that email's person record (made when absent, lower-cased)", async () => {
    const w = world();
    const seg = segment(w.dir, [{ user_id: 'priya', extra: { email: ' Priya@Example.COM ' } }]);
    const answer = await ingestWhole(w.ctxOf('acme'), seg);
    expect(answer.created).toBe(true);
    expect(answer.lines).toBe(4);
    const p = await w.state.getPerson('acme', 'priya@example.com');
    expect(p).toMatchObject({
      email: 'priya@example.com',
      seen_user_ids: ['priya'],
      user_ids: [],
      role: null,
      updated_by: SEEN_BY,
      last_sign_in_at: null,
      version: 1,
    });
    // The line is stored as written: the address as the writer gave it.
    const parts: Uint8Array[] = [];
    for await (const b of w.segments.readSegment(
      { tenant: 'acme', sid: seg.sid, w: seg.w },
      seg.bytes.length,
    ))
      parts.push(b);
    const stored = Buffer.concat(parts).toString('utf8');
    expect(stored).toContain(
      '"type":"participant.join","user_id":"priya","display_name":null,"email":" Priya@Example.COM "',
    );
  });

  it("keeps an existing record's role, links and updated_by; most recent id last, moved when seen again, at most MAX_LINKED_IDS", async () => {
    const w = world();
    await updatePerson(w.state, 'acme', 'sam@example.com', NOW.toISOString(), (p) => ({
      ...p,
      role: 'admin',
      user_ids: ['sam-linked'],
      updated_by: 'tok_admin',
    }));
    const claim = async (user_id: string) =>
      ingestWhole(w.ctxOf('acme'), segment(w.dir, [{ user_id, extra: { email: 'sam@example.com' } }]));
    await claim('sam');
    await claim('sam-laptop');
    expect((await w.state.getPerson('acme', 'sam@example.com'))!.seen_user_ids).toEqual([
      'sam',
      'sam-laptop',
    ]);
    await claim('sam');
    const p = (await w.state.getPerson('acme', 'sam@example.com'))!;
    expect(p.seen_user_ids).toEqual(['sam-laptop', 'sam']);
    expect(p).toMatchObject({ role: 'admin', user_ids: ['sam-linked'], updated_by: 'tok_admin', version: 4 });
    // The same id seen again while it is the most recent: read, not written.
    await claim('sam');
    expect((await w.state.getPerson('acme', 'sam@example.com'))!.version).toBe(4);

    for (let i = 0; i < MAX_LINKED_IDS; i++) await claim(`sam-${i}`);
    const full = (await w.state.getPerson('acme', 'sam@example.com'))!.seen_user_ids;
    expect(full).toHaveLength(MAX_LINKED_IDS);
    expect(full[0]).toBe('sam-0');
    expect(full.at(-1)).toBe(`sam-${MAX_LINKED_IDS - 1}`);
  });

  it('ignores a bad email (the chunk is still stored) and a join without one costs no person read or write', async () => {
    const w = world();
    const calls = { get: 0, put: 0 };
    const counted = countingStore(w.state, calls);
    const ctx = w.ctxOf('acme', { state: counted });
    const bad = [
      'no-at-sign',
      'two@@example.com',
      'a@b@example.com',
      'spaced name@example.com',
      '@example.com',
      'priya@',
      `${'x'.repeat(250)}@example.com`,
      'tab\t@example.com',
      'zero\u200bwidth@example.com',
      '',
      42,
      null,
      ['priya@example.com'],
      { address: 'priya@example.com' },
    ];
    const seg = segment(
      w.dir,
      bad.map((email, i) => ({ user_id: `u${i}`, extra: { email } })),
    );
    const answer = await ingestWhole(ctx, seg);
    expect(answer).toMatchObject({ created: true, lines: bad.length + 3 });
    expect((await w.state.listPeople('acme', { limit: 100 })).items).toEqual([]);
    expect(calls).toEqual({ get: 0, put: 0 });

    const plain = segment(w.dir, [{ user_id: 'priya' }]);
    expect((await ingestWhole(ctx, plain)).created).toBe(true);
    expect(calls).toEqual({ get: 0, put: 0 });

    // Beside a good one, the bad ones still count for nothing: only the good one is recorded.
    const mixed = segment(w.dir, [
      ...bad.slice(0, 3).map((email, i) => ({ user_id: `m${i}`, extra: { email } })),
      { user_id: 'ok', extra: { email: 'ok@example.com' } },
    ]);
    expect((await ingestWhole(ctx, mixed)).created).toBe(true);
    const people = (await w.state.listPeople('acme', { limit: 100 })).items;
    expect(people.map((p) => [p.email, p.seen_user_ids])).toEqual([['ok@example.com', ['ok']]]);
    expect(calls).toEqual({ get: 2, put: 1 });

    // Neither is a user_id that is no person id (empty, over 200 characters).
    const noId = segment(w.dir, [
      { user_id: '', extra: { email: 'priya@example.com' } },
      { user_id: 'p'.repeat(201), extra: { email: 'priya@example.com' } },
    ]);
    expect((await ingestWhole(ctx, noId)).created).toBe(true);
    expect(await w.state.getPerson('acme', 'priya@example.com')).toBeNull();
  });

  it('records at most MAX_CLAIMS_PER_CHUNK claims of one chunk, the first ones', () => {
    const events = Array.from({ length: MAX_CLAIMS_PER_CHUNK + 3 }, (_, i) => ({
      type: 'participant.join',
      obj: { user_id: `u${i}`, email: `p${i}@example.com` } as Record<string, unknown>,
      at: null,
      seq: i + 2,
      mergeAt: 0,
    }));
    const claims = emailClaimsOf([events[0]!, ...events]);
    expect(claims).toHaveLength(MAX_CLAIMS_PER_CHUNK);
    expect(claims.map((c) => c.user_id)).toEqual(
      events.slice(0, MAX_CLAIMS_PER_CHUNK).map((e) => e.obj.user_id),
    );
  });
});

describe('two tenants', () => {
  it("never mix: each tenant's record holds only what its own chunks claimed", async () => {
    const w = world();
    await ingestWhole(
      w.ctxOf('acme'),
      segment(w.dir, [{ user_id: 'priya', extra: { email: 'priya@example.com' } }]),
    );
    expect(await w.state.getPerson('globex', 'priya@example.com')).toBeNull();
    await ingestWhole(
      w.ctxOf('globex'),
      segment(w.dir, [{ user_id: 'priya-g', extra: { email: 'priya@example.com' } }]),
    );
    expect((await w.state.getPerson('acme', 'priya@example.com'))!.seen_user_ids).toEqual(['priya']);
    expect((await w.state.getPerson('globex', 'priya@example.com'))!.seen_user_ids).toEqual(['priya-g']);
    expect((await w.state.listPeople('acme', { limit: 10 })).items.map((p) => p.tenant)).toEqual(['acme']);
  });
});

describe('a failed write', () => {
  it('is logged without the email, never fails the chunk, and the next join with that email records it', async () => {
    const w = world();
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: unknown) => void errors.push(String(line)));
    // Every write of a person conflicts (as five lost races would), the first time round.
    let failing = true;
    const faulty = new Proxy(w.state, {
      get(target, key, receiver) {
        if (key === 'putPerson' && failing)
          return async () => {
            throw new StateConflictError('the person changed meanwhile');
          };
        const v = Reflect.get(target, key, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    }) as StateStore;
    const ctx = w.ctxOf('acme', { state: faulty });
    const first = segment(w.dir, [{ user_id: 'priya', extra: { email: 'priya@example.com' } }]);
    const answer = await ingestWhole(ctx, first);
    expect(answer).toMatchObject({ created: true, lines: 4 });
    expect((await w.state.getWriter('acme', first.sid, first.w))!.length).toBe(first.bytes.length);
    expect(await w.state.getPerson('acme', 'priya@example.com')).toBeNull();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('person ids seen by email not recorded (tenant acme, user_id "priya"');
    expect(errors[0]).not.toContain('priya@example.com');

    failing = false;
    await ingestWhole(ctx, segment(w.dir, [{ user_id: 'priya', extra: { email: 'priya@example.com' } }]));
    expect((await w.state.getPerson('acme', 'priya@example.com'))!.seen_user_ids).toEqual(['priya']);
  });
});

/** `state` counting its person reads and writes into `calls`. */
function countingStore(state: StateStore, calls: { get: number; put: number }): StateStore {
  return new Proxy(state, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        if (key === 'getPerson') calls.get++;
        if (key === 'putPerson') calls.put++;
        return v.apply(target, args);
      };
    },
  });
}
