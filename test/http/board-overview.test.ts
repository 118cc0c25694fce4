/**
 * `GET /v1/board/overview` over real HTTP (issue 14.1): the conditional poll (a quoted strong `ETag`,
 * `304` with no body while nothing shown changed, a new tag once a report lands), the board's cookie, and
 * ingest when the session summary cannot be written (the store here refuses summary merges: the chunk is
 * answered 503 `summary_not_updated` and not indexed, the board does not show the session, and the
 * client's retry writes the chunk and its summary, ADR 4).
 */
import { describe, expect, it } from 'vitest';
import { openLocalStores } from '../../lib/deploy/local-stores.js';
import type { Stores } from '../../lib/store/index.js';
import { request } from '../support/http.js';
import { writeSession } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk, upload } from '../support/stored.js';

let refuseSummaries = false;
/** The local stores, with a state store whose summary merges fail while `refuseSummaries` is set. */
function stores(dataDir: string): Stores {
  const s = openLocalStores(dataDir);
  const state = s.state;
  const merge = state.mergeSessionSummary.bind(state);
  state.mergeSessionSummary = async (...args) => {
    if (refuseSummaries) throw new Error('injected: the summary write failed');
    return merge(...args);
  };
  return s;
}

const srv = useServer({
  tokens: { board: ['board'], reporter: ['report'] },
  stores,
  mayLog: /summary_not_updated/,
});

const overview = (headers: Record<string, string> = {}, query = '') =>
  request(srv, 'GET', `/v1/board/overview${query}`, { token: srv.tokens.board, headers });

describe('GET /v1/board/overview', () => {
  it('answers 304 with no body while its ETag holds, and a new ETag once a report lands', async () => {
    const seg = writeSession(srv.workDir, {
      agent: 'claude-code',
      text: 'Restart the payments worker\nplease',
    });
    expect((await upload(srv, srv.admin, seg)).status).toBe(201);
    const first = await overview();
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toContain('application/json');
    expect(first.headers.get('cache-control')).toBe('no-store');
    const etag = first.headers.get('etag')!;
    expect(etag).toBe(`"${first.json.etag}"`);
    expect(first.json.rows[0]).toMatchObject({
      sid: seg.sid,
      title: 'Restart the payments worker',
      people: ['priya'],
      agents: ['claude-code'],
      group: 'rest',
    });

    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await overview({ 'if-none-match': inm });
      expect(again.status, inm).toBe(304);
      expect(again.bytes.length).toBe(0);
      expect(again.headers.get('etag')).toBe(etag);
    }
    expect((await overview({ 'if-none-match': '"something-else"' })).status).toBe(200);
    // other filters, another page: another view, another tag
    expect((await overview({ 'if-none-match': etag }, '?state=blocked')).status).toBe(200);

    const reported = await request(srv, 'POST', `/v1/sessions/${seg.sid}/status`, {
      token: srv.tokens.reporter,
      json: { state: 'blocked', note: 'the payments host is down' },
    });
    expect(reported.status).toBe(201);
    const after = await overview({ 'if-none-match': etag });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(etag);
    expect(after.json.rows[0]).toMatchObject({
      sid: seg.sid,
      group: 'blocked',
      note: 'the payments host is down',
    });
  });

  it("takes the board's cookie, as GET /v1/board does, and refuses no credentials with 401", async () => {
    const a = await request(srv, 'GET', '/v1/board/overview', {
      headers: { cookie: `hansard_board=${srv.tokens.board}` },
    });
    expect(a.status).toBe(200);
    expect(a.json.tenant).toBe('local');
    const none = await request(srv, 'GET', '/v1/board/overview');
    expect(none.status).toBe(401);
    expect(none.json.error.code).toBe('unauthorized');
  });

  it('refuses a bad page, limit or state with 400 naming it', async () => {
    for (const q of ['?page=0', '?page=x', '?limit=0', '?limit=201', '?state=asleep']) {
      const a = await overview({}, q);
      expect(a.status, q).toBe(400);
      expect(a.json.error.code, q).toBe('bad_request');
    }
  });

  it('indexes no chunk whose summary cannot be written (503 summary_not_updated); the retry writes both', async () => {
    refuseSummaries = true;
    try {
      const seg = writeSession(srv.workDir, { agent: 'codex', text: 'A title written by the retry' });
      const up = await postChunk(srv, srv.admin, seg.sid, seg.w, 0, seg.bytes);
      expect(up.status, up.text).toBe(503);
      expect(up.json.error.code).toBe('summary_not_updated');
      expect(up.json.error.details.expected_offset).toBe(0);
      const writer = await request(srv, 'GET', `/v1/sessions/${seg.sid}/writers/${seg.w}`, {
        token: srv.admin,
      });
      expect(writer.json?.length ?? 0).toBe(0);
      const row = (await overview()).json.rows.find((r: { sid: string }) => r.sid === seg.sid);
      expect(row).toBeUndefined();
      refuseSummaries = false;
      const retry = await postChunk(srv, srv.admin, seg.sid, seg.w, 0, seg.bytes);
      expect(retry.status, retry.text).toBe(201);
      const mended = (await overview()).json.rows.find((r: { sid: string }) => r.sid === seg.sid);
      expect(mended).toMatchObject({
        title: 'A title written by the retry',
        agents: ['codex'],
        lines: seg.lines.length,
      });
    } finally {
      refuseSummaries = false;
    }
  });
});
