/**
 * Attack (issue 24 item 3, lib/service/work/owner.ts, work-keys.ts, docs/work.md "Ownership"): who can
 * renew, change or stop a work item that is not theirs. Over real HTTP on the local stores, two tenants:
 * another chain of the same tenant, a session token that chain mints, a revoked parent, the admin of
 * another tenant, a session token of the owner's chain bound to another session, a start's idempotency
 * key replayed by another chain, keys replayed after 50+ operations, and owners racing.
 */
import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/format/ids.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({
  tenants: ['acme', 'globex'],
  tokens: {
    theirs: ['report', 'read', 'ingest'],
    reader: ['read'],
    globexAdmin: { tenant: 'globex', scopes: ['admin', 'report', 'read', 'ingest'] },
  },
});

const post = (token: string, path: string, json: object, key?: string) =>
  request(srv, 'POST', path, { token, json, ...(key ? { headers: { 'idempotency-key': key } } : {}) });

/** A fresh unbound capture token of acme (its own chain), minted by the admin: its secret and id. */
async function chainRoot(): Promise<{ token: string; id: string }> {
  const r = await post(srv.admin, '/v1/tokens', { scopes: ['report', 'read', 'ingest'], label: 'laptop' });
  expect(r.status, r.text).toBe(201);
  return { token: r.json.token as string, id: r.json.id as string };
}

async function sessionToken(parent: string, sid: string): Promise<string> {
  const r = await post(parent, `/v1/sessions/${sid}/tokens`, { scopes: ['report', 'read'] });
  expect(r.status, r.text).toBe(201);
  return r.json.token as string;
}

async function startItem(token: string, sid: string, key?: string) {
  const owner = { session: sid, system: 'claude-code', actor: 'coder' };
  const body = {
    ...owner,
    subject: { kind: 'free', ref: 'parser' },
    mode: 'implementing',
    summary: 'fixing the parser',
  };
  const r = await post(token, '/v1/work', body, key);
  expect(r.status, r.text).toBe(201);
  return { id: r.json.id as string, owner, body };
}

const item = async (id: string) =>
  (await request(srv, 'GET', `/v1/work/${id}`, { token: srv.tokens.reader })).json;

describe('takeover attempts', () => {
  // Was a FAULT: a legacy item (no started_by) was owned by "a token bound to its session", which any
  // unbound report token can mint. Now an admin only (lib/service/work/owner.ts).
  it('another chain cannot take over a legacy item (no started_by) by minting a token for its session', async () => {
    const sid = newId('s');
    const mine = await chainRoot();
    const { id, owner } = await startItem(mine.token, sid);
    const stored = (await srv.stores.state.getWork('acme', id))!;
    delete stored.started_by;
    await srv.stores.state.putWork({ ...stored, version: stored.version + 1 });
    const minted = await sessionToken(srv.tokens.theirs, sid);
    const stop = await post(minted, `/v1/work/${id}/stop`, { ...owner, outcome: 'paused' });
    expect(stop.status, stop.text).toBe(403);
    expect((await item(id)).state).not.toBe('stopped');
  });

  it("the admin of another tenant sees and writes nothing of acme's item (404, not 403)", async () => {
    const sid = newId('s');
    const { id, owner } = await startItem((await chainRoot()).token, sid);
    for (const token of [srv.tenants.globex.admin, srv.tokens.globexAdmin]) {
      const get = await request(srv, 'GET', `/v1/work/${id}`, { token });
      expect(get.status).toBe(404);
      for (const verb of ['heartbeat', 'checkpoint', 'stop']) {
        const r = await post(token, `/v1/work/${id}/${verb}`, {
          ...owner,
          ...(verb === 'checkpoint' ? { summary: 'mine now' } : {}),
          ...(verb === 'stop' ? { outcome: 'paused' } : {}),
        });
        expect(r.status, `${verb} ${r.text}`).toBe(404);
        expect(r.text).not.toContain(sid);
      }
    }
    expect((await item(id)).state).toBe('active');
  });

  it("a session token of the owner's chain whose parent was revoked writes nothing; the revoked root neither", async () => {
    const sid = newId('s');
    const mine = await chainRoot();
    const bound = await sessionToken(mine.token, sid);
    const { id, owner } = await startItem(bound, sid);
    expect((await post(bound, `/v1/work/${id}/heartbeat`, owner)).status).toBe(200);
    const revoke = await request(srv, 'DELETE', `/v1/tokens/${mine.id}`, { token: srv.admin });
    expect(revoke.status, revoke.text).toBeLessThan(300);
    for (const token of [bound, mine.token]) {
      const r = await post(token, `/v1/work/${id}/stop`, { ...owner, outcome: 'paused' });
      expect(r.status).toBe(401);
    }
    expect((await item(id)).state).toBe('active');
  });

  it("a session token of the owner's own chain bound to another session cannot write the item (404)", async () => {
    const sid = newId('s');
    const mine = await chainRoot();
    const { id, owner } = await startItem(mine.token, sid);
    const elsewhere = await sessionToken(mine.token, newId('s'));
    for (const body of [owner, { ...owner, session: newId('s') }]) {
      const r = await post(elsewhere, `/v1/work/${id}/stop`, { ...body, outcome: 'paused' });
      expect(r.status, r.text).toBe(404);
    }
    expect((await item(id)).state).toBe('active');
  });

  it("another chain replaying the owner's start under its Idempotency-Key is answered the item but owns nothing", async () => {
    const sid = newId('s');
    const mine = await chainRoot();
    const key = `start-${newId('e').slice(2)}`;
    const { id, owner, body } = await startItem(mine.token, sid, key);
    const replay = await post(srv.tokens.theirs, '/v1/work', body, key);
    expect([replay.status, replay.json.id]).toEqual([200, id]);
    const other = await post(srv.tokens.theirs, '/v1/work', { ...body, summary: 'another start' }, key);
    expect([other.status, other.json.error?.code]).toEqual([409, 'idempotency_mismatch']);
    const hb = await post(srv.tokens.theirs, `/v1/work/${id}/heartbeat`, owner);
    const stop = await post(srv.tokens.theirs, `/v1/work/${id}/stop`, { ...owner, outcome: 'paused' });
    expect([hb.status, stop.status]).toEqual([403, 403]);
    expect((await item(id)).state).toBe('active');
  });

  it("a non-owner replaying an owner's keyed checkpoint learns nothing: 403 before the key is looked up", async () => {
    const sid = newId('s');
    const mine = await chainRoot();
    const { id, owner } = await startItem(mine.token, sid);
    const key = 'ckpt-aaaaaaaa-0001';
    expect(
      (await post(mine.token, `/v1/work/${id}/checkpoint`, { ...owner, summary: 'step one' }, key)).status,
    ).toBe(200);
    const same = await post(
      srv.tokens.theirs,
      `/v1/work/${id}/checkpoint`,
      { ...owner, summary: 'step one' },
      key,
    );
    const other = await post(srv.tokens.theirs, `/v1/work/${id}/checkpoint`, { ...owner, summary: 'x' }, key);
    expect([same.status, other.status]).toEqual([403, 403]);
    expect(other.text).not.toContain('step one');
  });
});

describe('idempotency keys replayed long after, and races', () => {
  it('a key first used for wait, replayed as stop after 55 later keyed checkpoints, is refused and stops nothing', async () => {
    const sid = newId('s');
    const mine = await chainRoot();
    const { id, owner } = await startItem(mine.token, sid);
    const first = 'wait-key-00000001';
    const w = await post(
      mine.token,
      `/v1/work/${id}/wait`,
      { ...owner, dependency: { kind: 'human' }, reason: 'review' },
      first,
    );
    expect(w.status, w.text).toBe(200);
    for (let i = 0; i < 55; i++) {
      const c = await post(
        mine.token,
        `/v1/work/${id}/checkpoint`,
        { ...owner, summary: `step ${i}` },
        `ckpt-key-${String(i).padStart(6, '0')}`,
      );
      expect(c.status, c.text).toBe(200);
    }
    const stop = await post(mine.token, `/v1/work/${id}/stop`, { ...owner, outcome: 'completed' }, first);
    expect([stop.status, stop.json.error?.code]).toEqual([409, 'idempotency_mismatch']);
    // the same wait again is answered as applied, and applies nothing
    const before = await item(id);
    const again = await post(
      mine.token,
      `/v1/work/${id}/wait`,
      { ...owner, dependency: { kind: 'human' }, reason: 'review' },
      first,
    );
    expect(again.status).toBe(200);
    const after = await item(id);
    expect(after.state).toBe('active');
    expect(after.history.length).toBe(before.history.length);
    // and through resume, the pending-operation path
    const resumed = await post(mine.token, `/v1/work/${id}/resume`, {
      ...owner,
      op: 'stop',
      idempotency_key: first,
      body: { outcome: 'completed' },
    });
    expect(resumed.status).toBe(409);
    expect((await item(id)).state).toBe('active');
  }, 60_000);

  it('eight copies of one keyed checkpoint sent at once, as its key pushes the oldest out of the item, apply once', async () => {
    const sid = newId('s');
    const mine = await chainRoot();
    const { id, owner } = await startItem(mine.token, sid);
    for (let i = 0; i < 50; i++) {
      await post(
        mine.token,
        `/v1/work/${id}/checkpoint`,
        { ...owner, summary: `step ${i}` },
        `fill-key-${String(i).padStart(6, '0')}`,
      );
    }
    const before = (await item(id)).history.length;
    const key = 'race-key-00000001';
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        post(mine.token, `/v1/work/${id}/checkpoint`, { ...owner, summary: 'raced' }, key),
      ),
    );
    for (const a of answers) expect(a.status, a.text).toBe(200);
    expect((await item(id)).history.length).toBe(before + 1);
    // the oldest key, now archived, is still known
    const old = await post(
      mine.token,
      `/v1/work/${id}/checkpoint`,
      { ...owner, summary: 'step 0' },
      'fill-key-000000',
    );
    expect(old.status).toBe(200);
    expect((await item(id)).history.length).toBe(before + 1);
  }, 60_000);

  it("the owner's stop and an admin's checkpoint racing leave one consistent outcome", async () => {
    for (let round = 0; round < 5; round++) {
      const sid = newId('s');
      const mine = await chainRoot();
      const { id, owner } = await startItem(mine.token, sid);
      const [stop, ckpt] = await Promise.all([
        post(mine.token, `/v1/work/${id}/stop`, { ...owner, outcome: 'completed' }),
        post(srv.admin, `/v1/work/${id}/checkpoint`, { ...owner, summary: 'admin note' }),
      ]);
      expect(stop.status).toBe(200);
      const after = await item(id);
      expect(after.state).toBe('stopped');
      // the checkpoint either landed before the stop (in the history) or was refused after it
      if (ckpt.status === 200)
        expect(after.history.map((h: { op: string }) => h.op)).toEqual(['start', 'checkpoint', 'stop']);
      else expect([ckpt.status, ckpt.json.error.code]).toEqual([409, 'work_stopped']);
    }
  });
});
