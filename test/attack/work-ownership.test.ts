/**
 * Who may renew, change or stop a work item (issue 24 item 3, lib/service/work/owner.ts, docs/work.md
 * "Ownership"), over real HTTP on the local stores. Before the fix, ownership was what the body said: any
 * unbound `report` token of the tenant could heartbeat, checkpoint, wait, stop or resume anyone's item by
 * naming its session, system and actor (which `GET /v1/work/{id}` shows), and a refusal spelled the owner
 * out. Now the request's token proves it: the chain of the token that started the item, or an admin.
 */
import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/format/ids.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({
  tokens: {
    // the person (or harness) whose item it is: its capture token, not bound to a session
    mine: ['report', 'read', 'ingest'],
    // another token of the same tenant, another chain
    theirs: ['report', 'read', 'ingest'],
    reader: ['read'],
  },
});

const post = (token: string, path: string, json: object, key?: string) =>
  request(srv, 'POST', path, { token, json, ...(key ? { headers: { 'idempotency-key': key } } : {}) });

/** A session token minted through the API by `parent` for `sid` (as the Claude Code hook does). */
async function sessionToken(parent: string, sid: string): Promise<string> {
  const r = await post(parent, `/v1/sessions/${sid}/tokens`, { scopes: ['report', 'read'] });
  expect(r.status, r.text).toBe(201);
  return r.json.token as string;
}

async function startItem(token: string, sid: string, actor = 'coder') {
  const owner = { session: sid, system: 'claude-code', actor };
  const r = await post(token, '/v1/work', {
    ...owner,
    subject: { kind: 'free', ref: 'parser' },
    mode: 'implementing',
    summary: 'fixing the parser',
  });
  expect(r.status, r.text).toBe(201);
  return { id: r.json.id as string, owner };
}

/** Every write verb on item `id`, each a request the owner may send. */
function writes(id: string, owner: object) {
  return [
    ['heartbeat', `/v1/work/${id}/heartbeat`, owner],
    ['checkpoint', `/v1/work/${id}/checkpoint`, { ...owner, summary: 'taken over' }],
    ['wait', `/v1/work/${id}/wait`, { ...owner, dependency: { kind: 'human' }, reason: 'waiting on nobody' }],
    ['stop', `/v1/work/${id}/stop`, { ...owner, outcome: 'completed' }],
    [
      'resume',
      `/v1/work/${id}/resume`,
      { ...owner, op: 'stop', idempotency_key: 'takeover-0001', body: { outcome: 'paused' } },
    ],
  ] as const;
}

describe('a work item is owned by a token, not by what a body says', () => {
  it("refuses another chain's unbound report token on every write, naming no owner, changing nothing", async () => {
    const sid = newId('s');
    const { id, owner } = await startItem(srv.tokens.mine, sid);
    const before = (await request(srv, 'GET', `/v1/work/${id}`, { token: srv.tokens.reader })).json;
    for (const [verb, path, body] of writes(id, owner)) {
      const a = await post(srv.tokens.theirs, path, body);
      expect(a.status, `${verb}: ${a.text}`).toBe(403);
      expect(a.json.error.code).toBe('not_owner');
      // No owner to copy: neither the session, the system nor the actor is in the refusal.
      expect(a.json.error.details ?? {}, verb).toEqual({});
      for (const leak of [sid, 'claude-code', 'coder']) expect(a.text, verb).not.toContain(leak);
    }
    const after = (await request(srv, 'GET', `/v1/work/${id}`, { token: srv.tokens.reader })).json;
    expect(after).toEqual({ ...before, freshness: { ...before.freshness, as_of: after.freshness.as_of } });
  });

  it("says in plain words who may write the item and what to do instead, to another person's token and to a session token made from it", async () => {
    const sid = newId('s');
    const { id, owner } = await startItem(srv.tokens.mine, sid);
    const minted = await sessionToken(srv.tokens.theirs, sid);
    const next =
      'To report your own work, start an item of your own: hansard work start (the API: POST /v1/work)';
    const unbound = await post(srv.tokens.theirs, `/v1/work/${id}/heartbeat`, owner);
    expect([unbound.status, unbound.json.error.code]).toEqual([403, 'not_owner']);
    expect(unbound.json.error.message).toBe(
      `work ${id} was started with another token: only the token it was started with, the session tokens made from the same token, or an admin may renew, change or stop it. ${next}`,
    );
    const bound = await post(minted, `/v1/work/${id}/stop`, { ...owner, outcome: 'paused' });
    expect([bound.status, bound.json.error.code]).toEqual([403, 'not_owner']);
    expect(bound.json.error.message).toBe(
      `work ${id} was started with another token than the one this session token was made from: only the token it was started with, the session tokens made from the same token, or an admin may renew, change or stop it. ${next}`,
    );
    // And a token that names the wrong actor as well is still only told it is not its item.
    const both = await post(srv.tokens.theirs, `/v1/work/${id}/heartbeat`, { ...owner, actor: 'x' });
    expect([both.status, both.json.error.code, both.json.error.details ?? {}]).toEqual([
      403,
      'not_owner',
      {},
    ]);
  });

  it('refuses a session token that another chain minted for the same session', async () => {
    const sid = newId('s');
    const { id, owner } = await startItem(srv.tokens.mine, sid);
    // Any unbound report token may mint a token bound to any session: being bound to it proves nothing.
    const minted = await sessionToken(srv.tokens.theirs, sid);
    for (const [verb, path, body] of writes(id, owner)) {
      const a = await post(minted, path, body);
      expect([verb, a.status, a.json.error?.code]).toEqual([verb, 403, 'not_owner']);
    }
    const w = (await request(srv, 'GET', `/v1/work/${id}`, { token: srv.tokens.reader })).json;
    expect([w.state, w.history.length]).toEqual(['active', 1]);
  });

  it("keeps the hook's and the MCP server's writes of one session working: one chain, both ways", async () => {
    const sid = newId('s');
    // Started inside the agent with the session token the hook minted from the capture token…
    const hookToken = await sessionToken(srv.tokens.mine, sid);
    const { id, owner } = await startItem(hookToken, sid);
    // …heartbeated by the shipper with the capture token, and by another session token of that chain.
    const mcpToken = await sessionToken(srv.tokens.mine, sid);
    for (const t of [srv.tokens.mine, hookToken, mcpToken]) {
      const hb = await post(t, `/v1/work/${id}/heartbeat`, owner);
      expect(hb.status, hb.text).toBe(200);
    }
    expect((await post(mcpToken, `/v1/work/${id}/checkpoint`, { ...owner, mode: 'testing' })).status).toBe(
      200,
    );
    // Started with the unbound token, it is written by a session token minted from it.
    const second = await startItem(srv.tokens.mine, sid, 'coder2');
    const st = await post(hookToken, `/v1/work/${second.id}/stop`, { ...second.owner, outcome: 'paused' });
    expect([st.status, st.json.state]).toEqual([200, 'stopped']);
  });

  it('lets an admin write any item; its own token naming another actor is 409 work_mismatch, naming the field, not its value', async () => {
    const sid = newId('s');
    const { id, owner } = await startItem(srv.tokens.mine, sid);
    const wrong = await post(srv.tokens.mine, `/v1/work/${id}/heartbeat`, { ...owner, actor: 'someone' });
    expect([wrong.status, wrong.json.error.code]).toEqual([409, 'work_mismatch']);
    expect(wrong.json.error.details).toEqual({ fields: ['actor'] });
    expect(wrong.json.error.message).toBe(
      `work ${id} was started with another actor than this request names: send the session, system and actor it was started with (\`hansard work status ${id} --json\` shows them; the API: GET /v1/work/${id})`,
    );
    expect(wrong.text).not.toContain('"coder"');
    const stop = await post(srv.admin, `/v1/work/${id}/stop`, { ...owner, outcome: 'paused' });
    expect([stop.status, stop.json.outcome]).toEqual([200, 'paused']);
  });

  it('an item from before the starting token was kept: an admin only, not even a token bound to its session', async () => {
    const sid = newId('s');
    const { id, owner } = await startItem(srv.tokens.mine, sid);
    // As stored before issue 24.3: no `started_by`.
    const item = (await srv.stores.state.getWork(srv.tenant.name, id))!;
    delete item.started_by;
    await srv.stores.state.putWork({ ...item, version: item.version + 1 });
    const theirs = await post(srv.tokens.theirs, `/v1/work/${id}/heartbeat`, owner);
    expect([theirs.status, theirs.json.error?.code]).toEqual([403, 'not_owner']);
    const bound = await sessionToken(srv.tokens.mine, sid);
    const own = await post(bound, `/v1/work/${id}/heartbeat`, owner);
    expect([own.status, own.json.error?.code]).toEqual([403, 'not_owner']);
    expect(own.json.error.message).toContain('only an admin may renew, change or stop it');
    expect(own.text).not.toContain(sid);
    expect((await post(srv.admin, `/v1/work/${id}/heartbeat`, owner)).status).toBe(200);
  });

  it('never answers the token that started an item', async () => {
    const sid = newId('s');
    const { id } = await startItem(srv.tokens.mine, sid);
    const stored = (await srv.stores.state.getWork(srv.tenant.name, id))!;
    expect(stored.started_by?.token).toMatch(/\S/);
    for (const path of [`/v1/work/${id}`, `/v1/work?session=${sid}`]) {
      const a = await request(srv, 'GET', path, { token: srv.tokens.reader });
      expect(a.status).toBe(200);
      expect(a.text).not.toContain(stored.started_by!.token);
      expect(a.text).not.toContain('started_by');
    }
  });
});

describe('idempotency keys are remembered for the whole life of an item', () => {
  it('a checkpoint resent under its key after 50 later keyed checkpoints is not applied again', async () => {
    const sid = newId('s');
    const { id, owner } = await startItem(srv.tokens.mine, sid);
    const first = { ...owner, mode: 'testing', summary: 'the first step' };
    expect((await post(srv.tokens.mine, `/v1/work/${id}/checkpoint`, first, 'old-key-0000')).status).toBe(
      200,
    );
    for (let i = 1; i <= 50; i++) {
      const c = await post(
        srv.tokens.mine,
        `/v1/work/${id}/checkpoint`,
        { ...owner, summary: `step ${i}` },
        `new-key-${String(i).padStart(4, '0')}`,
      );
      expect(c.status, c.text).toBe(200);
    }
    // The first checkpoint's answer was lost; the client sends it again, exactly.
    const again = await post(srv.tokens.mine, `/v1/work/${id}/checkpoint`, first, 'old-key-0000');
    expect(again.status, again.text).toBe(200);
    expect([again.json.summary, again.json.mode]).toEqual(['step 50', 'testing']);
    const w = (await request(srv, 'GET', `/v1/work/${id}`, { token: srv.tokens.reader })).json;
    expect(w.history.filter((h: { op: string }) => h.op === 'checkpoint')).toHaveLength(51);
    // Its key with other content is still refused, and so is the key through resume.
    const changed = await post(
      srv.tokens.mine,
      `/v1/work/${id}/checkpoint`,
      { ...first, summary: 'other words' },
      'old-key-0000',
    );
    expect([changed.status, changed.json.error?.code]).toEqual([409, 'idempotency_mismatch']);
    const resumed = await post(srv.tokens.mine, `/v1/work/${id}/resume`, {
      ...owner,
      op: 'checkpoint',
      idempotency_key: 'old-key-0000',
      body: { mode: 'testing', summary: 'the first step' },
    });
    expect([resumed.status, resumed.json.summary]).toEqual([200, 'step 50']);
    // The item holds at most 50 keys itself; the rest are claimed keys in the store.
    const stored = (await srv.stores.state.getWork(srv.tenant.name, id))!;
    expect(stored.applied).toHaveLength(50);
    expect(stored.applied_archived).toBe(1);
  });
});
