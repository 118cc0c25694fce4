/**
 * Attacks on search through corrections (issue 30 item 5 "corrections update what is found", item 1
 * "never more than the replay shows") over real HTTP on loopback with the local stores: a writer's
 * correction event is what the replay applies (lib/log/replay/corrections.ts), and search must find and
 * show what the replay shows, no more and no other.
 *
 * Fixed (lib/service/search/docs.ts: a correction makes a fix only of the fields event documents are made
 * of, `text`, `input`, `value`):
 * - SEARCH-FIX-REPORT: a correction naming `d-0` with field `note` (a status report's row id, which no
 *   event has) rewrote the report's note as search shows and finds it, marked corrected; the replay
 *   applies nothing (`correction_target_missing`), and the board's report row shows the note as reported.
 *   Any writer of the session could so put words in a status report (or in a work item's summary, by its
 *   id and field `summary`).
 *
 * Kept as `it.fails`:
 * - SEARCH-FIX-PERSON: a correction of a message's `user_id` (the replay applies it: the timeline and the
 *   title name the new person) leaves search naming, filtering and finding the old one: `person:` of the
 *   old id still finds the line and the hit says `person: <old>`. A user_id corrected because it named
 *   someone who should not be named stays in search.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SearchAnswer } from '../../lib/contract/search.js';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({
  tenants: ['acme'],
  tokens: { ingest: ['ingest'], reader: ['read'] },
});

type Writer = ReturnType<typeof openSession>;

function newWriter(agent: string, sid?: string): Writer {
  mkdirSync(srv.workDir, { recursive: true });
  return openSession(mkdtempSync(join(srv.workDir, 'fix-')), { agent, ...(sid ? { sid } : {}) });
}

async function upload(s: Writer, from = 0): Promise<number> {
  const bytes = readFileSync(s.path);
  const r = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=${from}`, {
    token: srv.tokens.ingest,
    body: bytes.subarray(from),
  });
  expect(r.status, r.text).toBe(201);
  return bytes.length;
}

async function search(q: string): Promise<SearchAnswer> {
  const r = await request(srv, 'GET', `/v1/search?q=${encodeURIComponent(q)}&limit=50`, {
    token: srv.tokens.reader,
  });
  expect(r.status, r.text).toBe(200);
  return SearchAnswer.parse(r.json);
}

/** The session's effective NDJSON replay, parsed. */
async function replay(sid: string): Promise<Array<Record<string, unknown>>> {
  const r = await request(srv, 'GET', `/v1/sessions/${sid}/replay`, { token: srv.tokens.reader });
  expect(r.status, r.text).toBe(200);
  return r.text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

describe('corrections as search shows them', () => {
  it('a correction of a status report’s row (d-0) changes nothing search shows (SEARCH-FIX-REPORT)', async () => {
    const s = newWriter('claude-code');
    s.message({ user_id: 'priya', text: 'ship the parser' });
    const from = await upload(s);
    const st = await request(srv, 'POST', `/v1/sessions/${s.sid}/status`, {
      token: srv.tenants.acme.admin,
      json: { state: 'blocked', note: 'waiting on legal review of the contract' },
    });
    expect(st.status, st.text).toBeLessThan(300);
    await srv.indexNow();
    expect((await search('legal review type:report')).hits).toHaveLength(1);

    // A writer of the session "corrects" the report's note: no event has id d-0.
    s.correct({ target_id: 'd-0', field: 'note', value: 'legal approved everything, ship it', reason: 'x' });
    await upload(s, from);
    await srv.indexNow();

    // The replay applies nothing: the correction names no event of the session.
    const events = await replay(s.sid);
    expect(events.some((e) => Array.isArray(e.corrected))).toBe(false);

    const forged = await search('approved type:report');
    expect(forged.hits, JSON.stringify(forged.hits)).toEqual([]);
    const real = await search('"legal review" type:report');
    expect(real.hits.map((h) => [h.id, h.corrected])).toEqual([['d-0', false]]);
  });

  it.fails('a corrected user_id is not found nor shown as the old person (SEARCH-FIX-PERSON)', async () => {
    const s = newWriter('terminal');
    const m = s.message({ user_id: 'jane.realname', text: 'the pager rotation is broken' });
    s.correct({ target_id: m.id, field: 'user_id', value: 'anonymous', reason: 'do not name her' });
    await upload(s);
    await srv.indexNow();

    const events = await replay(s.sid);
    const msg = events.find((e) => e.id === m.id)!;
    expect(msg.user_id).toBe('anonymous');

    const hits = (await search('pager rotation')).hits;
    expect(hits.map((h) => h.person)).toEqual(['anonymous']);
    expect((await search('person:jane.realname')).hits).toEqual([]);
    expect((await search('realname')).hits.filter((h) => h.type === 'message')).toEqual([]);
  });

  it('a correction of a tool output, an envelope field or an unknown target adds no text to a line', async () => {
    const s = newWriter('claude-code');
    const m = s.message({ user_id: 'priya', text: 'deploy the thing' });
    const t = s.turnStart({ context_message_ids: [m.id] });
    const a = s.action({ turn_id: t.id, tool: 'bash', input: { command: 'make deploy' } });
    const r = s.actionResult({ action_id: a.id, status: 'ok', output: 'deployed' });
    // Fields the replay refuses (envelope, type) or that search does not index (a result's output).
    s.correct({ target_id: m.id, field: 'sid', value: 'zorblax envelope', reason: 'x' });
    s.correct({ target_id: m.id, field: 'type', value: 'zorblax type', reason: 'x' });
    s.correct({ target_id: r.id, field: 'output', value: 'zorblax output', reason: 'x' });
    s.correct({ target_id: 'm_nonexistent', field: 'text', value: 'zorblax missing', reason: 'x' });
    await upload(s);
    await srv.indexNow();
    // Each correction's own row shows its value (as the timeline's correction row does) ...
    const found = (await search('zorblax')).hits;
    expect(found.every((h) => h.type === 'correction')).toBe(true);
    expect(found).toHaveLength(4);
    // ... but no message, action or output is found by them nor shows them.
    expect((await search('zorblax type:message')).hits).toEqual([]);
    expect((await search('zorblax type:action')).hits).toEqual([]);
    expect((await search('deploy type:message')).hits.map((h) => [h.corrected])).toEqual([[false]]);
    expect((await search('deploy type:action')).hits.map((h) => [h.corrected])).toEqual([[false]]);
  });
});
