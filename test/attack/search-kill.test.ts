/**
 * Search survives a `kill -9` (issue 30 item 5 "nothing accepted is missed across restarts"): a real
 * `hansard serve` process (harness/serve-process.ts), sent chunks of many sessions and SIGKILLed right
 * after the last 201, before its drain (every 250 ms) can have indexed all of them; restarted on the same
 * data directory, it indexes every accepted chunk by itself, each once, and a reindex gives the same hits.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServeProcess } from '../../harness/serve-process.js';
import { SearchAnswer, SearchStatus } from '../../lib/contract/search.js';
import { request } from '../support/http.js';
import { writeSession } from '../support/segments.js';
import { upload } from '../support/stored.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-search-kill-'));
const dataDir = join(root, 'data');
const workDir = join(root, 'work');
const procs: ServeProcess[] = [];
afterAll(async () => {
  await Promise.all(procs.map((p) => p.close()));
  rmSync(root, { recursive: true, force: true });
});

async function serve(): Promise<ServeProcess> {
  const p = await startServeProcess({ dataDir });
  procs.push(p);
  return p;
}

/** Polls the status until nothing is queued (or fails after `ms`): the restarted server's own drain. */
async function drained(srv: ServeProcess, ms: number): Promise<SearchStatus> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await request(srv, 'GET', '/v1/search/status', { token: srv.admin });
    expect(r.status, r.text).toBe(200);
    const st = SearchStatus.parse(r.json);
    if (st.queued === 0) return st;
    if (Date.now() > end) throw new Error(`still ${st.queued} queued after ${ms} ms`);
    await new Promise((x) => setTimeout(x, 100));
  }
}

const WORDS = Array.from({ length: 24 }, (_, i) => `killword${i}x`);

async function hitsOf(srv: ServeProcess, q: string): Promise<SearchAnswer> {
  const r = await request(srv, 'GET', `/v1/search?q=${encodeURIComponent(q)}&limit=50`, { token: srv.admin });
  expect(r.status, r.text).toBe(200);
  return SearchAnswer.parse(r.json);
}

describe('a server killed between 201s and indexing', () => {
  it('indexes every accepted chunk after its restart, each once', async () => {
    let srv = await serve();
    const sessions = WORDS.map((w) => writeSession(workDir, { text: `please handle ${w} today` }));
    // All at once, then SIGKILL as soon as the last is answered.
    await Promise.all(sessions.map((s) => upload(srv, srv.admin, s)));
    srv.signal('SIGKILL');
    expect(await srv.exited).toBeNull();

    srv = await serve();
    const st = await drained(srv, 30_000);
    // Each session: its message, action and output.
    expect(st.docs).toBe(WORDS.length * 3);
    const counts: string[] = [];
    for (const w of WORDS) counts.push(`${w}:${(await hitsOf(srv, w)).hits.length}`);
    expect(counts).toEqual(WORDS.map((w) => `${w}:1`));

    const re = await request(srv, 'POST', '/v1/search/reindex', { token: srv.admin, json: {} });
    expect(re.status, re.text).toBe(202);
    await drained(srv, 30_000);
    const again: string[] = [];
    for (const w of WORDS) again.push(`${w}:${(await hitsOf(srv, w)).hits.length}`);
    expect(again).toEqual(counts);
  }, 120_000);
});
