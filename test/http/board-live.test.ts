/**
 * The board's live updates over real HTTP (issue 14.2): `GET /board/events` (server-sent events: the
 * region at once, again on a change, heartbeats, the per-token cap, nothing read once the client is gone),
 * `GET /board/fragment` (ETag, 304 on `If-None-Match`), `GET /assets/…` (hashed, immutable), and the
 * pages' CSP (scripts from our origin only). The app's timing is shortened: checks every 100 ms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetHref } from '../../lib/board/assets.js';
import { type BoardFixture, startBoard } from '../board/overview-fixture.js';

const TIMING = { checkMs: 100, heartbeatMs: 300, maxStreams: 2, retryMs: 500, lifetimeMs: 60_000 };
let sse: BoardFixture;
let poll: BoardFixture;
let sid: string;
/** reads of the state store (sse's app), counted */
let stateReads = 0;

const cookie = (f: BoardFixture) => ({ cookie: `hansard_board=${f.board}` });

/** Opens `/board/events` and collects what it sends until `stop()`. */
async function openEvents(f: BoardFixture, query = '') {
  const ac = new AbortController();
  const res = await fetch(`${f.base}/board/events${query}`, { headers: cookie(f), signal: ac.signal });
  let text = '';
  const reading = (async () => {
    if (!res.body) return;
    const dec = new TextDecoder();
    try {
      for await (const chunk of res.body) text += dec.decode(chunk as Uint8Array, { stream: true });
    } catch {
      // aborted
    }
  })();
  return {
    res,
    text: () => text,
    /** the `event: overview` blocks received so far */
    events: () => text.split('\n\n').filter((b) => b.startsWith('event: overview')),
    async until(pred: () => boolean, ms = 3000) {
      const end = Date.now() + ms;
      while (!pred()) {
        if (Date.now() > end) throw new Error(`timed out; got:\n${text.slice(0, 2000)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop() {
      ac.abort();
      await reading;
    },
  };
}

/** `openEvents`, retried while the server has not yet noticed an earlier stream's client went away. */
async function openAccepted(f: BoardFixture) {
  for (let i = 0; i < 50; i++) {
    const ev = await openEvents(f);
    if (ev.res.status === 200) return ev;
    await ev.stop();
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no stream was accepted in 2.5 s');
}

beforeAll(async () => {
  sse = await startBoard({ liveTiming: TIMING });
  // Count reads of the state store: the listing of sessions the overview is made of.
  const state = sse.stores.state as unknown as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(state))) {
    const fn = state[name];
    if (typeof fn !== 'function' || name === 'constructor' || !/^(list|get)/.test(name)) continue;
    state[name] = (...args: unknown[]) => {
      stateReads++;
      return (fn as (...a: unknown[]) => unknown).apply(sse.stores.state, args);
    };
  }
  poll = await startBoard({ live: 'poll' });
  sid = await sse.record('claude-code', 'priya', 'fix the flaky upload test');
  await sse.report(sid, 'working', 'on it');
  await poll.record('codex', 'sam', 'write the release notes');
}, 60_000);

afterAll(async () => {
  expect(sse?.logged ?? []).toEqual([]);
  await sse?.close();
  await poll?.close();
});

describe('GET /board/events', () => {
  it('sends the region at once as `event: overview` (with retry and id), then again when it changes', async () => {
    const ev = await openEvents(sse);
    expect(ev.res.status).toBe(200);
    expect(ev.res.headers.get('content-type')).toContain('text/event-stream');
    await ev.until(() => ev.events().length >= 1);
    const first = ev.events()[0]!;
    expect(first).toMatch(/^event: overview\ndata: /);
    expect(first).toMatch(/\nretry: 500$/m);
    expect(first).toMatch(/\nid: \S+/);
    // every line of the HTML is its own data line: no raw line could end the event
    for (const line of first.split('\n')) expect(line).toMatch(/^(event|data|id|retry): /);
    expect(first).toContain(`data-sid="${sid}"`);
    await sse.report(sid, 'blocked', 'waiting for the CI credentials');
    await ev.until(() => ev.events().length >= 2);
    expect(ev.events()[1]).toContain('waiting for the CI credentials');
    await ev.stop();
  });

  it('sends a comment heartbeat while nothing changes', async () => {
    const ev = await openAccepted(sse);
    await ev.until(() => ev.events().length >= 1);
    await ev.until(() => ev.text().includes(': heartbeat\n\n'), 2000);
    expect(ev.events()).toHaveLength(1);
    await ev.stop();
  });

  it('refuses a stream beyond the per-token cap (429 too_many_streams), and gives the place back on disconnect', async () => {
    const a = await openEvents(sse);
    const b = await openEvents(sse);
    await a.until(() => a.events().length >= 1);
    const c = await fetch(`${sse.base}/board/events`, { headers: cookie(sse) });
    expect(c.status).toBe(429);
    expect(c.headers.get('retry-after')).toBe('10');
    const body = (await c.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('too_many_streams');
    expect(body.error.message).toContain('2 live board pages');
    await a.stop();
    // The server notices the disconnect: a new stream is taken within a moment.
    const d = await openAccepted(sse);
    expect(d.res.status).toBe(200);
    await d.stop();
    await b.stop();
  });

  it('reads nothing more once the client is gone', async () => {
    const ev = await openAccepted(sse);
    await ev.until(() => ev.events().length >= 1);
    const during = stateReads;
    // It checks while connected (every 100 ms; a loaded machine may run the timer late: wait for it).
    await ev.until(() => stateReads > during, 10_000);
    expect(stateReads).toBeGreaterThan(during);
    await ev.stop();
    // A check in flight ends: wait until the count holds still for 300 ms (5 s at most; a stream still
    // checking every 100 ms never holds still, and fails below).
    let after = stateReads;
    for (let waited = 0; waited < 5000; waited += 300) {
      await new Promise((r) => setTimeout(r, 300));
      if (stateReads === after) break;
      after = stateReads;
    }
    await new Promise((r) => setTimeout(r, 1000)); // ten check intervals
    expect(stateReads).toBe(after);
  });

  it('is refused without the board cookie (401 JSON, not a redirect), and in a poll deployment (404)', async () => {
    const anon = await fetch(`${sse.base}/board/events`, { redirect: 'manual' });
    expect(anon.status).toBe(401);
    expect(((await anon.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    const p = await fetch(`${poll.base}/board/events`, { headers: cookie(poll) });
    expect(p.status).toBe(404);
    expect(((await p.json()) as { error: { message: string } }).error.message).toContain('/board/fragment');
  });
});

describe('GET /board/fragment', () => {
  it('answers the region with an ETag, 304 for If-None-Match of it, and 200 again after a change', async () => {
    const a = await fetch(`${poll.base}/board/fragment`, { headers: cookie(poll) });
    expect(a.status).toBe(200);
    const etag = a.headers.get('etag');
    expect(etag).toMatch(/^"[^"]+"$/);
    const html = await a.text();
    expect(html).toContain('write the release notes');
    expect(html).not.toContain('<html');
    const b = await fetch(`${poll.base}/board/fragment`, {
      headers: { ...cookie(poll), 'if-none-match': etag! },
    });
    expect(b.status).toBe(304);
    expect(await b.text()).toBe('');
    const sid2 = await poll.record('codex', 'sam', 'a second session');
    await new Promise((r) => setTimeout(r, 600)); // past the summaries' shared listing
    const c = await fetch(`${poll.base}/board/fragment`, {
      headers: { ...cookie(poll), 'if-none-match': etag! },
    });
    expect(c.status).toBe(200);
    expect(c.headers.get('etag')).not.toBe(etag);
    expect(await c.text()).toContain(sid2);
  });

  it('keeps the filters: a filtered fragment shows only what matches', async () => {
    const a = await fetch(`${poll.base}/board/fragment?agent=nobody`, { headers: cookie(poll) });
    expect(a.status).toBe(200);
    const html = await a.text();
    expect(html).not.toContain('data-sid=');
    expect(html).toContain('No session matches');
  });
});

describe('the pages and their assets', () => {
  it('serves the live page with scripts from our origin only, under a CSP that allows no inline script', async () => {
    const a = await fetch(`${sse.base}/`, { headers: cookie(sse) });
    const csp = a.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-eval');
    const html = await a.text();
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBe(3);
    for (const [, attrs, body] of scripts) {
      expect(body).toBe(''); // no inline script
      expect(attrs).toMatch(/src="\/assets\/[a-z.]+\.js\?v=[0-9a-f]{16}"/);
    }
    expect(html).toContain('sse-connect="/board/events"');
    // the stylesheet is sent as written: an escaped quote would void its attribute selectors
    expect(html).toContain('.live[data-state="live"]');
    const p = await (await fetch(`${poll.base}/`, { headers: cookie(poll) })).text();
    expect(p).toContain('hx-get="/board/fragment"');
    expect(p).not.toContain('sse.min.js');
  });

  it('serves each asset with its hash as immutable, and 404 for anything else', async () => {
    for (const name of ['htmx.min.js', 'sse.min.js', 'board.js'] as const) {
      const href = assetHref(name)!;
      const a = await fetch(`${sse.base}${href}`);
      expect(a.status, name).toBe(200);
      expect(a.headers.get('content-type')).toContain('text/javascript');
      expect(a.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect((await a.text()).length).toBeGreaterThan(500);
      const stale = await fetch(`${sse.base}/assets/${name}?v=0000`);
      expect(stale.headers.get('cache-control')).toBe('public, max-age=300');
    }
    for (const bad of ['package.json', '..%2Fpackage.json', 'htmx.js']) {
      expect((await fetch(`${sse.base}/assets/${bad}`)).status, bad).toBe(404);
    }
  });
});
