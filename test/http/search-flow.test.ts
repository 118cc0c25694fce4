/**
 * Search end to end (issue 30 items 1, 2, 5, 6) over real HTTP on loopback, the local stores (SQLite FTS5
 * in the state database, its indexing queue drained by the server's drain, run by hand here): chunks
 * written by the library writer are found once indexed, a correction in a later chunk changes what finds
 * the message, a reindex from the stored segments gives the same answers, reports are found with their
 * state, and a phrase that exists only in another tenant is never found.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({
  tenants: ['acme', 'globex'],
  tokens: {
    reader: ['read'],
    board: ['board'],
    ingest: ['ingest'],
    globex: { tenant: 'globex', scopes: ['read'] },
  },
});

type Writer = ReturnType<typeof openSession>;

function newWriter(agent: string, sid?: string): Writer {
  mkdirSync(srv.workDir, { recursive: true });
  return openSession(mkdtempSync(join(srv.workDir, 'search-')), { agent, ...(sid ? { sid } : {}) });
}

/** Uploads what the writer wrote since `from` as one chunk; answers the new length. */
async function upload(token: string, s: Writer, from: number): Promise<number> {
  const bytes = readFileSync(s.path);
  const r = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=${from}`, {
    token,
    body: bytes.subarray(from),
  });
  expect(r.status, r.text).toBe(201);
  return bytes.length;
}

async function search(token: string, q: string, extra = '') {
  const r = await request(srv, 'GET', `/v1/search?q=${encodeURIComponent(q)}${extra}`, { token });
  expect(r.status, r.text).toBe(200);
  return r.json as {
    hits: Array<{
      sid: string;
      id: string;
      type: string;
      link: string;
      snippet: Array<{ text: string; hit: boolean }>;
      corrected: boolean;
      person: string | null;
      tool: string | null;
      state: string | null;
    }>;
    next_cursor: string | null;
    lag_seconds: number | null;
    pending: number | null;
    session_only: string | null;
    depth_limited: boolean;
  };
}

describe('search over what ingest stored', () => {
  const admin = () => srv.tenants.acme.admin;
  let sid = '';
  let messageId = '';
  let actionId = '';
  let person: Writer;
  let agent: Writer;
  let personLength = 0;

  it('finds messages, actions and outputs once the queue is drained, never before', async () => {
    person = newWriter('terminal');
    sid = person.sid;
    const m = person.message({
      user_id: 'priya',
      text: 'Please look at the billing migration before Friday',
    });
    messageId = m.id;
    personLength = await upload(admin(), person, 0);

    agent = newWriter('claude-code', sid);
    const t = agent.turnStart({ context_message_ids: [m.id] });
    const a = agent.action({
      turn_id: t.id,
      tool: 'Bash',
      input: { command: 'terraform apply -target=billing' },
      caused_by: [m.id],
    });
    actionId = a.id;
    agent.actionResult({ action_id: a.id, status: 'ok', output: 'zanzibar output that is not searchable' });
    agent.output({ turn_id: t.id, text: 'The migration ran cleanly.', caused_by: [m.id] });
    agent.turnEnd({ turn_id: t.id, status: 'completed' });
    await upload(admin(), agent, 0);

    const before = await search(srv.tokens.reader, 'migration');
    expect(before.hits).toEqual([]);
    expect(before.lag_seconds).not.toBeNull();
    expect(await srv.indexNow()).toBeGreaterThanOrEqual(2);

    const after = await search(srv.tokens.reader, 'migration');
    expect(after.hits.map((h) => h.type).sort()).toEqual(['message', 'output']);
    expect(after.lag_seconds).toBe(0);
    const msg = after.hits.find((h) => h.type === 'message')!;
    expect(msg.link).toBe(`/sessions/${sid}?at=e-${messageId}#e-${messageId}`);
    expect(msg.snippet.filter((p) => p.hit).map((p) => p.text)).toEqual(['migration']);
    expect(msg.person).toBe('priya');

    const cmd = await search(srv.tokens.board, '"terraform apply" tool:bash');
    expect(cmd.hits.map((h) => [h.id, h.tool])).toEqual([[actionId, 'Bash']]);
    // The action's person is that of the message it answered.
    expect((await search(srv.tokens.reader, 'terraform person:priya')).hits).toHaveLength(1);
    // A tool's output is not searchable: only what the timeline shows as the agent's words and actions.
    expect((await search(srv.tokens.reader, 'zanzibar')).hits).toEqual([]);
  });

  it('follows a correction shipped in a later chunk: the corrected words find the message, the old do not', async () => {
    person.correct({
      target_id: messageId,
      field: 'text',
      value: 'Please look at the invoicing rollout',
      reason: 'wrong project',
    });
    personLength = await upload(admin(), person, personLength);
    await srv.indexNow();
    const now = await search(srv.tokens.reader, 'invoicing type:message');
    expect(now.hits.map((h) => [h.id, h.corrected])).toEqual([[messageId, true]]);
    expect((await search(srv.tokens.reader, 'billing type:message')).hits).toEqual([]);
    // The correction's value is found as a correction too.
    expect((await search(srv.tokens.reader, 'invoicing type:correction')).hits).toHaveLength(1);
  });

  it('finds a status report by its note and filters by the state', async () => {
    const r = await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
      token: admin(),
      json: { state: 'blocked', note: 'waiting for the DBA to approve the schema' },
    });
    expect(r.status, r.text).toBeLessThan(300);
    await srv.indexNow();
    const found = await search(srv.tokens.reader, 'schema state:blocked');
    expect(found.hits.map((h) => [h.type, h.state, h.link])).toEqual([
      ['report', 'blocked', `/sessions/${sid}?at=d-0#d-0`],
    ]);
    expect((await search(srv.tokens.reader, 'schema state:done')).hits).toEqual([]);
    // The state filter holds for every document of the session.
    expect((await search(srv.tokens.reader, 'terraform state:blocked')).hits).toHaveLength(1);
  });

  it('rebuilds from the stored segments with the same answers', async () => {
    const queries = ['migration', 'invoicing', 'terraform', 'schema', 'agent:claude-code', `session:${sid}`];
    const before = await Promise.all(queries.map((q) => search(srv.tokens.reader, q)));
    const re = await request(srv, 'POST', '/v1/search/reindex', { token: admin(), json: {} });
    expect(re.status, re.text).toBe(202);
    expect(re.json).toMatchObject({ sessions: 1, writers: 2 });
    expect((await search(srv.tokens.reader, 'terraform')).hits).toEqual([]);
    await srv.indexNow();
    const after = await Promise.all(queries.map((q) => search(srv.tokens.reader, q)));
    expect(after.map((a) => a.hits)).toEqual(before.map((b) => b.hits));
    expect(before.every((b) => b.hits.length > 0)).toBe(true);
  });

  it('never answers another tenant’s words, whatever the query or filter', async () => {
    const g = newWriter('codex');
    g.message({ user_id: 'gus', text: 'the quokka ledger reconciliation plan' });
    const mint = await request(srv, 'POST', '/v1/tokens', {
      token: srv.tenants.globex.admin,
      json: { scopes: ['ingest'] },
    });
    expect(mint.status, mint.text).toBe(201);
    await upload(mint.json.token, g, 0);
    await srv.indexNow();
    expect((await search(srv.tokens.globex, '"quokka ledger"')).hits).toHaveLength(1);
    for (const q of [
      '"quokka ledger"',
      'quokka',
      `quokka session:${g.sid}`,
      'person:gus',
      'agent:codex',
      `session:${g.sid}`,
    ]) {
      expect((await search(srv.tokens.reader, q)).hits, q).toEqual([]);
    }
    // And globex sees none of acme's.
    expect((await search(srv.tokens.globex, 'terraform')).hits).toEqual([]);
  });

  it('tells a session-bound token it searches its session only, and nothing of the tenant’s queue or size', async () => {
    const mint = await request(srv, 'POST', `/v1/sessions/${sid}/tokens`, {
      token: admin(),
      json: { scopes: ['read'] },
    });
    expect(mint.status, mint.text).toBe(201);
    const bound = mint.json.token as string;
    const a = await search(bound, 'terraform');
    expect(a.hits).toHaveLength(1);
    expect(a).toMatchObject({ session_only: sid, pending: null, lag_seconds: null });
    const st = await request(srv, 'GET', '/v1/search/status', { token: bound });
    expect(st.json).toEqual({ queued: null, lag_seconds: null, docs: null, bytes: null });
    const open = await request(srv, 'GET', '/v1/search/status', { token: srv.tokens.reader });
    expect(open.json.docs).toBeGreaterThan(0);
    expect((await search(srv.tokens.reader, 'terraform')).session_only).toBeNull();
  });

  it('says when a rebuild is pending, and when hits go past the deepest page', async () => {
    const re = await request(srv, 'POST', '/v1/search/reindex', { token: admin(), json: { sid } });
    expect(re.status, re.text).toBe(202);
    const during = await search(srv.tokens.reader, 'terraform');
    expect(during.hits).toEqual([]);
    expect(during.pending).toBe(3);
    await srv.indexNow();
    expect((await search(srv.tokens.reader, 'terraform')).pending).toBe(0);

    const many = newWriter('bulk');
    for (let i = 0; i < 1001; i++) many.message({ user_id: 'bot', text: `wombat line ${i}` });
    await upload(admin(), many, 0);
    await srv.indexNow();
    const last = await search(srv.tokens.reader, 'wombat', '&limit=50');
    expect(last.depth_limited).toBe(false);
    let cursor = last.next_cursor;
    let pages = 1;
    let page = last;
    while (cursor) {
      page = await search(srv.tokens.reader, 'wombat', `&limit=50&cursor=${cursor}`);
      cursor = page.next_cursor;
      pages += 1;
    }
    expect(pages).toBe(20);
    expect(page.hits).toHaveLength(50);
    expect(page.depth_limited).toBe(true);
  });

  it('answers 403 to a token with neither read nor board scope', async () => {
    const r = await request(srv, 'GET', '/v1/search?q=migration', { token: srv.tokens.ingest });
    expect(r.status).toBe(403);
  });
});
