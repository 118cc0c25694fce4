import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/format/ids.js';
import { mintToken } from '../../lib/service/index.js';
import type { StateStore } from '../../lib/store/index.js';
import { type App, BACKENDS, useAppBackends } from '../support/app-backends.js';

const backends = useAppBackends('hansard-work-');
// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
type Answer = { status: number; json: any };

describe.each(BACKENDS)('work leases on %s', (name) => {
  let apps: [App, App];
  let token: string;
  let state: StateStore;
  let clock = Date.parse('2026-06-01T10:00:00.000Z');
  const tick = (seconds: number) => {
    clock += seconds * 1000;
  };
  beforeAll(async () => {
    ({ apps, token, state } = await backends.open(name, () => new Date(clock)));
  });

  const call = async (
    method: string,
    path: string,
    body?: unknown,
    o: { app?: App; key?: string; as?: string } = {},
  ): Promise<Answer> => {
    const res = await (o.app ?? apps[0]).request(path, {
      method,
      headers: {
        authorization: `Bearer ${o.as ?? token}`,
        'content-type': 'application/json',
        ...(o.key ? { 'idempotency-key': o.key } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, json: await res.json() };
  };
  const owner = (session: string) => ({ session, system: 'claude-code', actor: 'coder' });
  const start = (session: string, extra: object = {}, o = {}) =>
    call(
      'POST',
      '/v1/work',
      {
        ...owner(session),
        subject: { kind: 'session', ref: session },
        mode: 'implementing',
        summary: 'parser error recovery',
        ...extra,
      },
      o,
    );

  it('start → heartbeat → checkpoint → wait → stop, history of the semantic operations only', async () => {
    const sid = newId('s');
    const s = await start(sid, { ttl_seconds: 600 });
    expect(s.status, JSON.stringify(s.json)).toBe(201);
    const id = s.json.id as string;
    expect(id).toMatch(/^wk_[0-9A-Z]{26}$/);
    expect(s.json).toMatchObject({
      state: 'active',
      mode: 'implementing',
      ttl_seconds: 600,
      freshness: { shown: 'observed' },
    });
    tick(120);
    const hb = await call('POST', `/v1/work/${id}/heartbeat`, owner(sid));
    expect(hb.status).toBe(200);
    expect(hb.json.freshness).toMatchObject({
      shown: 'observed',
      lease_expires_at: new Date(clock + 600_000).toISOString(),
    });
    expect(hb.json.history).toHaveLength(1);
    const cp = await call('POST', `/v1/work/${id}/checkpoint`, {
      ...owner(sid),
      mode: 'testing',
      summary: 'unit tests for the parser',
    });
    expect(cp.json).toMatchObject({ mode: 'testing', summary: 'unit tests for the parser', state: 'active' });
    const wt = await call('POST', `/v1/work/${id}/wait`, {
      ...owner(sid),
      dependency: { kind: 'review', ref: 'PR 42' },
      reason: 'needs a maintainer review of the grammar change',
    });
    expect(wt.json).toMatchObject({
      state: 'waiting',
      waiting_on: { dependency: { kind: 'review', ref: 'PR 42' } },
    });
    const st = await call('POST', `/v1/work/${id}/stop`, { ...owner(sid), outcome: 'completed' });
    expect(st.json).toMatchObject({
      state: 'stopped',
      outcome: 'completed',
      freshness: { shown: 'stopped' },
    });
    expect(st.json.history.map((h: { op: string }) => h.op)).toEqual(['start', 'checkpoint', 'wait', 'stop']);
    // Stopped is stopped: no heartbeat revives it.
    const late = await call('POST', `/v1/work/${id}/heartbeat`, owner(sid));
    expect(late.status).toBe(409);
    expect(late.json.error.code).toBe('work_stopped');
    const got = await call('GET', `/v1/work/${id}`);
    expect(got.json).toEqual(st.json);
  });

  it('shows an expired lease as unknown, with the last report and its time, never idle', async () => {
    const sid = newId('s');
    const s = await start(sid, { ttl_seconds: 60 });
    const id = s.json.id;
    tick(59);
    expect((await call('GET', `/v1/work/${id}`)).json.freshness.shown).toBe('observed');
    tick(2);
    const w = (await call('GET', `/v1/work/${id}`)).json;
    expect(w.freshness).toMatchObject({
      shown: 'unknown',
      last_reported: { op: 'start', at: s.json.started_at },
    });
    expect(w.state).toBe('active');
    expect(JSON.stringify(w)).not.toMatch(/idle|abandon|finished/);
    // A heartbeat makes it observed again.
    await call('POST', `/v1/work/${id}/heartbeat`, owner(sid));
    expect((await call('GET', `/v1/work/${id}`)).json.freshness.shown).toBe('observed');
  });

  it('refuses another session, system or actor (409 work_mismatch) and a bound token of another session (404)', async () => {
    const sid = newId('s');
    const id = (await start(sid)).json.id;
    for (const who of [
      owner(newId('s')),
      { ...owner(sid), system: 'codex' },
      { ...owner(sid), actor: 'someone' },
    ]) {
      const a = await call('POST', `/v1/work/${id}/heartbeat`, who);
      expect(a.status).toBe(409);
      expect(a.json.error.code).toBe('work_mismatch');
      // which field, not the item's value (issue 24.3)
      expect(JSON.stringify(a.json)).not.toContain(sid);
    }
    const bound = (
      await mintToken(
        state,
        'acme',
        { scopes: ['report', 'read'], session: newId('s'), label: 't' },
        new Date(),
      )
    ).token;
    expect(
      (await call('POST', `/v1/work/${id}/stop`, { ...owner(sid), outcome: 'paused' }, { as: bound })).status,
    ).toBe(404);
    expect((await call('GET', `/v1/work/${id}`, undefined, { as: bound })).status).toBe(404);
    expect((await call('GET', `/v1/work?session=${sid}`, undefined, { as: bound })).status).toBe(404);
    expect((await call('GET', `/v1/work/${id}`)).json.state).toBe('active');
  });

  it("is owned by the starting token's chain, not by the body (issue 24.3)", async () => {
    const unbound = async () =>
      mintToken(state, 'acme', { scopes: ['report', 'read'], session: null, label: 't' }, new Date());
    /** a session token minted through the API by `parent`, as a hook does */
    const sessionToken = async (parent: string, session: string) => {
      const r = await call('POST', `/v1/sessions/${session}/tokens`, { scopes: ['report'] }, { as: parent });
      expect(r.status).toBe(201);
      return r.json.token as string;
    };
    const [mine, theirs] = [await unbound(), await unbound()];
    const sid = newId('s');
    const id = (await start(sid, {}, { as: mine.token })).json.id;
    const stored = (await state.getWork('acme', id))!;
    expect(stored.started_by).toEqual({ token: mine.record.id, root: mine.record.root });
    for (const [as, status] of [
      [theirs.token, 403],
      [await sessionToken(theirs.token, sid), 403],
      [await sessionToken(mine.token, sid), 200],
      [mine.token, 200],
    ] as const) {
      const a = await call('POST', `/v1/work/${id}/heartbeat`, owner(sid), { as, app: apps[1] });
      expect(a.status).toBe(status);
    }
  });

  it('remembers a key after 50 later keyed operations: applied once, claimed in the store', async () => {
    const sid = newId('s');
    const id = (await start(sid)).json.id;
    const cp = (summary: string, key: string) =>
      call('POST', `/v1/work/${id}/checkpoint`, { ...owner(sid), summary }, { key, app: apps[1] });
    expect((await cp('the first step', 'key-old-0000')).status).toBe(200);
    for (let i = 1; i <= 51; i++) expect((await cp(`step ${i}`, `key-new-${i}-0000`)).status).toBe(200);
    const again = await cp('the first step', 'key-old-0000');
    expect([again.status, again.json.summary]).toEqual([200, 'step 51']);
    expect((await cp('other words', 'key-old-0000')).status).toBe(409);
    const item = (await state.getWork('acme', id))!;
    expect([item.applied.length, item.applied_archived]).toEqual([50, 2]);
    expect(item.history.filter((h) => h.op === 'checkpoint')).toHaveLength(52);
    expect(await state.readClaim('acme', `work:applied:${id}`, 'key-new-1-0000')).toMatch(/^checkpoint /);
  });

  it('loses nothing when two clients heartbeat, checkpoint and stop at once', async () => {
    const sid = newId('s');
    const id = (await start(sid)).json.id;
    const writes = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 3 === 0
          ? call(
              'POST',
              `/v1/work/${id}/checkpoint`,
              { ...owner(sid), summary: `step ${i}` },
              { app: apps[i % 2] },
            )
          : call('POST', `/v1/work/${id}/heartbeat`, owner(sid), { app: apps[i % 2] }),
      ),
    );
    expect(
      writes.map((w) => w.status),
      JSON.stringify(writes.find((w) => w.status !== 200)?.json),
    ).toEqual(Array(12).fill(200));
    const item = (await state.getWork('acme', id))!;
    expect(item.version).toBe(13);
    expect(item.history.filter((h) => h.op === 'checkpoint')).toHaveLength(4);
    // Two stops at once: exactly one lands, the other is told the item is stopped.
    const stops = await Promise.all([
      call('POST', `/v1/work/${id}/stop`, { ...owner(sid), outcome: 'completed' }, { app: apps[0] }),
      call('POST', `/v1/work/${id}/stop`, { ...owner(sid), outcome: 'paused' }, { app: apps[1] }),
    ]);
    expect(stops.map((s) => s.status).sort()).toEqual([200, 409]);
    expect((await state.getWork('acme', id))!.history.filter((h) => h.op === 'stop')).toHaveLength(1);
  });

  it('resumes an exact pending operation once, and refuses a changed one', async () => {
    const sid = newId('s');
    const first = await start(sid, {}, { key: 'start-key-0001' });
    expect(first.status).toBe(201);
    // The start sent again (the answer was lost): the same item, nothing new.
    const again = await start(sid, {}, { key: 'start-key-0001' });
    expect(again.status).toBe(200);
    expect(again.json.id).toBe(first.json.id);
    expect((await call('GET', `/v1/work?session=${sid}`)).json.items).toHaveLength(1);
    const changedStart = await start(sid, { summary: 'something else' }, { key: 'start-key-0001' });
    expect(changedStart.status).toBe(409);
    const id = first.json.id;
    const body = { mode: 'testing', summary: 'integration tests' };
    const resume = (b: object) =>
      call('POST', `/v1/work/${id}/resume`, {
        ...owner(sid),
        op: 'checkpoint',
        idempotency_key: 'cp-key-0001',
        body: b,
      });
    const r1 = await resume(body);
    expect(r1.status).toBe(200);
    const r2 = await resume(body);
    expect(r2.status).toBe(200);
    expect(r2.json.history.filter((h: { op: string }) => h.op === 'checkpoint')).toHaveLength(1);
    const changed = await resume({ ...body, summary: 'other words' });
    expect(changed.status).toBe(409);
    expect(changed.json.error.code).toBe('idempotency_mismatch');
    expect((await call('GET', `/v1/work/${id}`)).json.summary).toBe('integration tests');
  });

  it('refuses content that is not plain words for collaborators (422 content_rule, nothing stored)', async () => {
    const sid = newId('s');
    const cases: [string, string][] = [
      ['credential', `deploying with key ${'AKIA'}IOSFODNN7EXAMPLE`],
      ['absolute_path', 'editing /home/ann/proj/src/parser.ts'],
      ['command', 'npm test -- --run parser'],
      ['command', 'build && deploy'],
      ['prompt', 'You are a helpful assistant. Fix the parser'],
      ['prompt', 'first line\nsecond line'],
    ];
    for (const [rule, summary] of cases) {
      const a = await start(sid, { summary });
      expect(a.status, summary).toBe(422);
      expect(a.json.error).toMatchObject({ code: 'content_rule', details: { field: 'summary', rule } });
    }
    for (const summary of [
      'fixing the parser in src/parser.ts',
      // was 'reviewing PR 42 for the /v1/work routes': any `/a/b` starting a word reads as an absolute
      // path since the rule was broadened (test/attack/work-content-bypass.test.ts); a URL's path does not
      'reviewing PR 42 for the work routes',
      'reading https://example.com/docs/work/leases for the routes',
      'running the unit tests',
    ]) {
      expect((await start(sid, { summary })).status, summary).toBe(201);
    }
    expect((await call('GET', `/v1/work?session=${sid}`)).json.items).toHaveLength(4);
  });
});
