/**
 * The board's overview (issue 14.1, lib/service/board/overview.ts) through the API on SQLite and on DynamoDB
 * Local: chunks and reports fill the session summaries, and `GET /v1/board/overview` groups, orders,
 * filters, counts and pages them, with an etag that changes only with what the page shows. The clock is
 * the apps' own (`now`), moved by the cases; timestamps of events are minute-aligned so that ages bucket
 * predictably.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import { formatTs } from '../../../lib/log/format/time.js';
import type { StateStore } from '../../../lib/store/index.js';
import { type App, BACKENDS, useAppBackends } from '../../support/app-backends.js';

const backends = useAppBackends('hansard-overview-');

/** The cases' epoch: a whole minute. */
const T0 = Date.UTC(2026, 10, 30, 9, 0, 0);
const min = (n: number) => T0 + n * 60_000;

interface Ev {
  type: string;
  /** ms since the epoch */
  at: number;
  [field: string]: unknown;
}

/** The NDJSON of `events` as writer `w` of `sid` writes them, a writer.start of `agent` first. */
function segment(sid: string, w: string, agent: string | null, events: Ev[], startAt = T0): string {
  const all: Ev[] = [
    { type: 'writer.start', at: startAt, writer_id: w, meta: agent === null ? {} : { agent } },
    ...events,
  ];
  return all
    .map(({ type, at, ...fields }, seq) =>
      JSON.stringify({
        v: 3,
        sid,
        w,
        seq,
        id: newId('e'),
        ts: formatTs(at * 1000),
        mono: seq,
        type,
        ...fields,
      }),
    )
    .map((l) => `${l}\n`)
    .join('');
}

describe.each(BACKENDS)('the overview on %s', (name) => {
  let app: App;
  let token: string;
  let state: StateStore;
  let clock = min(0);
  beforeAll(async () => {
    ({
      apps: [app],
      token,
      state,
    } = await backends.open(name, () => new Date(clock)));
  });

  // biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
  const call = async (method: string, path: string, body?: string | object, bearer = token): Promise<any> => {
    const res = await app.request(path, {
      method,
      headers: {
        authorization: `Bearer ${bearer}`,
        'content-type': typeof body === 'string' ? 'application/x-ndjson' : 'application/json',
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, etag: res.headers.get('etag'), json: text ? JSON.parse(text) : null };
  };
  const ship = async (sid: string, w: string, ndjson: string, offset = 0) => {
    const a = await call('POST', `/v1/sessions/${sid}/writers/${w}/chunks?offset=${offset}`, ndjson);
    expect(a.status, JSON.stringify(a.json)).toBe(201);
    return a.json.length as number;
  };
  const report = async (sid: string, state: string, note: string, at: number) => {
    clock = at;
    expect((await call('POST', `/v1/sessions/${sid}/status`, { state, note })).status).toBe(201);
  };
  const overview = (query = '') => call('GET', `/v1/board/overview${query}`);
  const sidsOf = (o: { json: { rows: Array<{ sid: string }> } }) => o.json.rows.map((r) => r.sid);

  const S = {
    a: newId('s'),
    b: newId('s'),
    c: newId('s'),
    d: newId('s'),
    e: newId('s'),
    f: newId('s'),
    g: newId('s'),
  };

  /** Ships one writer of `sid` (agent, a join and a message of `who` at `at`), the clock at `at`. */
  const session = async (sid: string, o: { agent?: string; who?: string; text?: string; at: number }) => {
    const w = newId('w');
    clock = o.at;
    const events: Ev[] = o.who
      ? [{ type: 'message', at: o.at, user_id: o.who, text: o.text ?? `a prompt of ${o.who}` }]
      : [];
    await ship(sid, w, segment(sid, w, o.agent ?? null, events, o.at));
  };

  it('ingest fills title, people and agents: the earliest message across writers is the title', async () => {
    const [w1, w2] = [newId('w'), newId('w')];
    clock = min(1);
    const length = await ship(
      S.a,
      w1,
      segment(S.a, w1, 'claude-code', [
        { type: 'participant.join', at: min(0), user_id: 'priya', display_name: 'Priya' },
        {
          type: 'message',
          at: min(1),
          user_id: 'priya',
          text: '  Fix the flaky checkout test\nit fails on CI',
        },
      ]),
    );
    expect((await state.listSessionSummaries('acme'))[0]).toMatchObject({
      title: 'Fix the flaky checkout test',
      people: ['priya'],
      agents: ['claude-code'],
    });
    // a later chunk of the same writer: a later message does not retitle it
    const more = JSON.stringify({
      v: 3,
      sid: S.a,
      w: w1,
      seq: 3,
      id: newId('e'),
      ts: formatTs(min(2) * 1000),
      mono: 3,
      type: 'message',
      user_id: 'priya',
      text: 'and the cart test',
    });
    await ship(S.a, w1, `${more}\n`, length);
    // another writer's message, earlier by its ts, shipped later, does
    await ship(
      S.a,
      w2,
      segment(S.a, w2, 'codex', [
        { type: 'message', at: min(-5), user_id: 'sam', text: 'Earlier: look at payments' },
      ]),
    );
    const [summary] = (await state.listSessionSummaries('acme')).filter((s) => s.sid === S.a);
    expect(summary).toMatchObject({
      title: 'Earlier: look at payments',
      people: ['priya', 'sam'],
      agents: ['claude-code', 'codex'],
      writers: 2,
    });
  });

  it('reports fill state, note and state_since: a run of one state keeps its first time', async () => {
    await report(S.a, 'working', 'on it', min(2));
    await report(S.a, 'blocked', 'waiting for the DBA', min(3));
    await report(S.a, 'blocked', 'still waiting for the DBA', min(4));
    let [s] = (await state.listSessionSummaries('acme')).filter((x) => x.sid === S.a);
    expect(s).toMatchObject({
      state: 'blocked',
      state_since: new Date(min(3)).toISOString(),
      note: 'still waiting for the DBA',
      reported_at: new Date(min(4)).toISOString(),
      first_note: 'on it',
    });
    await report(S.a, 'working', 'unblocked', min(5));
    await report(S.a, 'blocked', 'the DBA left', min(6));
    [s] = (await state.listSessionSummaries('acme')).filter((x) => x.sid === S.a);
    expect(s).toMatchObject({ state: 'blocked', state_since: new Date(min(6)).toISOString() });
  });

  it('groups urgent first, the longest waiting first, the rest by activity, no segments last', async () => {
    // b blocked before a; c needs review; d done 2 h ago; e done 30 h ago; f never reported; g reported only
    await session(S.b, { agent: 'codex', who: 'ana', at: min(-60) });
    await report(S.b, 'blocked', 'needs a product decision', min(-50));
    await session(S.c, { agent: 'claude-code', who: 'priya', text: 'Review the refund flow', at: min(-40) });
    await report(S.c, 'needs_review', 'PR #12 is ready', min(-30));
    await session(S.d, { agent: 'claude-code', at: min(-200) });
    await report(S.d, 'done', 'shipped', min(-120));
    await session(S.e, { agent: 'codex', at: min(-2000) });
    await report(S.e, 'done', 'shipped long ago', min(-1800));
    await session(S.f, { who: 'sam', at: min(-10) });
    await report(S.g, 'working', 'no segments yet', min(-20));
    clock = min(7);
    const o = await overview();
    expect(o.status).toBe(200);
    expect(sidsOf(o)).toEqual([S.b, S.a, S.c, S.d, S.f, S.e, S.g]);
    expect(o.json.rows.map((r: { group: string }) => r.group)).toEqual([
      'blocked',
      'blocked',
      'needs_review',
      'done_recently',
      'rest',
      'rest',
      'no_segments',
    ]);
    expect(o.json.groups).toEqual([
      { group: 'blocked', count: 2 },
      { group: 'needs_review', count: 1 },
      { group: 'working', count: 0 },
      { group: 'done_recently', count: 1 },
      { group: 'rest', count: 2 },
      { group: 'no_segments', count: 1 },
    ]);
    expect(o.json).toMatchObject({ tenant: 'acme', total: 7, matched: 7, page: 1, pages: 1 });
    expect(o.json.facets).toEqual({ agents: ['claude-code', 'codex'], people: ['ana', 'priya', 'sam'] });
    const a = o.json.rows[1];
    expect(a).toMatchObject({
      sid: S.a,
      title: 'Earlier: look at payments',
      people: ['priya', 'sam'],
      agents: ['claude-code', 'codex'],
      state: 'blocked',
      state_since: new Date(min(6)).toISOString(),
      note: 'the DBA left',
      writers: 2,
      lines: 6,
      work: [],
      evidence: { supported: 0, unsupported: 0, unchecked: 0, contested: 0 },
    });
    // a session without messages is titled by its first report's note; one never reported has no title
    expect(o.json.rows[3]).toMatchObject({ sid: S.d, title: 'shipped', people: [], agents: ['claude-code'] });
    expect(o.json.rows[4]).toMatchObject({ sid: S.f, title: 'a prompt of sam', state: null, evidence: null });
    expect(o.json.rows[6]).toMatchObject({ sid: S.g, title: 'no segments yet', writers: 0 });
  });

  it('filters by state (none too), agent, person and free text; counts what matches', async () => {
    clock = min(7);
    expect(sidsOf(await overview('?state=blocked'))).toEqual([S.b, S.a]);
    expect(sidsOf(await overview('?state=none'))).toEqual([S.f]);
    expect(sidsOf(await overview('?agent=codex'))).toEqual([S.b, S.a, S.e]);
    expect(sidsOf(await overview('?person=sam'))).toEqual([S.a, S.f]);
    expect(sidsOf(await overview('?agent=codex&person=sam'))).toEqual([S.a]);
    // case-insensitive, over title, note, sid, agents and people
    expect(sidsOf(await overview('?q=REFUND'))).toEqual([S.c]);
    expect(sidsOf(await overview('?q=product%20decision'))).toEqual([S.b]);
    expect(sidsOf(await overview(`?q=${S.e.slice(2).toLowerCase()}`))).toEqual([S.e]);
    expect(sidsOf(await overview('?q=ANA'))).toEqual([S.b]);
    const none = await overview('?q=nothing-like-this&agent=codex');
    expect(none.json).toMatchObject({ total: 7, matched: 0, rows: [], page: 1, pages: 1 });
    expect(none.json.filters).toEqual({ q: 'nothing-like-this', agent: 'codex' });
    expect(none.json.groups.every((g: { count: number }) => g.count === 0)).toBe(true);
    // the facets are the tenant's, whatever the filters
    expect(none.json.facets.people).toEqual(['ana', 'priya', 'sam']);
    // an empty filter (a form's blank field) filters nothing
    expect(sidsOf(await overview('?agent=&q='))).toHaveLength(7);
    expect((await overview('?state=asleep')).status).toBe(400);
  });

  it('pages in board order; a page past the end has no rows', async () => {
    clock = min(7);
    const all = sidsOf(await overview());
    const pages = await Promise.all([1, 2, 3, 4].map((p) => overview(`?limit=2&page=${p}`)));
    expect(pages.map(sidsOf)).toEqual([all.slice(0, 2), all.slice(2, 4), all.slice(4, 6), all.slice(6)]);
    expect(pages.map((p) => p.json.pages)).toEqual([4, 4, 4, 4]);
    const past = await overview('?limit=2&page=9');
    expect(past.status).toBe(200);
    expect(past.json).toMatchObject({ rows: [], page: 9, pages: 4, matched: 7 });
    expect((await overview('?page=0')).status).toBe(400);
    expect((await overview('?limit=201')).status).toBe(400);
  });

  it('the etag: equal while nothing shown changes, new on a report, a new minute of age, a lease expiring', async () => {
    clock = min(7);
    const first = await overview();
    expect(first.etag).toBe(`"${first.json.etag}"`);
    clock = min(7) + 20_000;
    const same = await overview();
    expect(same.json.generated_at).not.toBe(first.json.generated_at);
    expect(same.json.etag).toBe(first.json.etag);
    // a report changes it
    await report(S.c, 'needs_review', 'PR #12 rebased', min(7) + 30_000);
    const reported = await overview();
    expect(reported.json.etag).not.toBe(first.json.etag);
    expect((await overview()).json.etag).toBe(reported.json.etag);
    // an age turning over a minute changes it
    clock = min(8) + 40_000;
    expect((await overview()).json.etag).not.toBe(reported.json.etag);
    // a lease expiring changes it, ages aside: a work item of a (90 s lease) at 8:10; the lease ends at 9:40
    clock = min(8) + 10_000;
    const started = await call('POST', '/v1/work', {
      session: S.a,
      system: 'ci',
      actor: 'agent',
      subject: { kind: 'session', ref: S.a },
      mode: 'testing',
      summary: 'running the checkout tests',
      ttl_seconds: 90,
    });
    expect(started.status, JSON.stringify(started.json)).toBe(201);
    clock = min(9) + 35_000;
    const leased = await overview('?state=blocked');
    expect(leased.json.rows[1].work[0].freshness.shown).toBe('observed');
    clock = min(9) + 45_000;
    const expired = await overview('?state=blocked');
    expect(expired.json.rows[1].work[0].freshness.shown).toBe('unknown');
    expect(expired.json.etag).not.toBe(leased.json.etag);
    clock = min(9) + 50_000;
    expect((await overview('?state=blocked')).json.etag).toBe(expired.json.etag);
  });

  it('a work write shows in the next overview at once: it drops the shared listing as chunks and reports do', async () => {
    clock = min(20);
    const before = (await overview()).json.rows.find((r: { sid: string }) => r.sid === S.b);
    clock = min(21);
    const started = await call('POST', '/v1/work', {
      session: S.b,
      system: 'ci',
      actor: 'agent',
      subject: { kind: 'session', ref: S.b },
      mode: 'testing',
      summary: 'running the search tests',
      ttl_seconds: 600,
    });
    expect(started.status, JSON.stringify(started.json)).toBe(201);
    // Within the listing's 500 ms: without the drop, the row keeps its old last activity.
    const after = (await overview()).json.rows.find((r: { sid: string }) => r.sid === S.b);
    expect(after.last_activity).toBe(new Date(min(21)).toISOString());
    expect(after.last_activity).not.toBe(before.last_activity);
  });

  it('a session-bound token sees its own session only, counts and facets included', async () => {
    const minted = await call('POST', `/v1/sessions/${S.c}/tokens`, { scopes: ['read'] });
    expect(minted.status, JSON.stringify(minted.json)).toBe(201);
    const o = await call('GET', '/v1/board/overview', undefined, minted.json.token);
    expect(o.status).toBe(200);
    expect(sidsOf(o)).toEqual([S.c]);
    expect(o.json).toMatchObject({ total: 1, matched: 1 });
    expect(o.json.facets).toEqual({ agents: ['claude-code'], people: ['priya'] });
    expect(JSON.stringify(o.json)).not.toContain(S.a);
  });
});
