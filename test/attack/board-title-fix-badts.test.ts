/**
 * The board title against a correction whose `ts` is not a readable time. The timeline applies every
 * correction in merged order (lib/log/replay/corrections.ts), whatever its ts says, so the session page shows
 * the corrected first prompt. The summary (lib/service/ingest/summary.ts `addToSummary`) takes a
 * correction only when its ts parses (`at !== null`): the overview's title keeps the text the correction
 * removed (a password), and `?q=` finds it. Over real HTTP, local stores.
 *
 * The case found a fault, now fixed (`Was a FAULT (fixed): …`).
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { board: ['board'] } });

describe('a correction of the first prompt with an unreadable ts', () => {
  // Was a FAULT (fixed): a correction whose ts does not parse is applied by the timeline but skipped by the board summary, so the overview title (and ?q=) keep the redacted secret.
  it('corrects the board title as the timeline does', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const s = openSession(mkdtempSync(join(srv.workDir, 'badts-')), { agent: 'coder' });
    const m = s.message({ user_id: 'alice', text: 'deploy with password hunter2-SECRET please' });
    s.correct({
      target_id: m.id,
      field: 'text',
      value: 'deploy with password [removed] please',
      reason: 'secret',
    });
    s.end();
    const lines = readFileSync(s.path, 'utf8').split('\n');
    const i = lines.findIndex((l) => l.includes('"type":"correction"'));
    lines[i] = lines[i]!.replace(/"ts":"[^"]*"/, '"ts":"2026-13-45T99:99:99Z"');
    const up = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`, {
      token: srv.admin,
      body: lines.join('\n'),
    });
    expect(up.status, up.text).toBe(201);
    const page = await request(srv, 'GET', `/sessions/${s.sid}`, {
      headers: { cookie: `hansard_board=${srv.tokens.board}` },
    });
    expect(page.text).toContain('<h2 id="tl-title">deploy with password [removed] please');

    const ov = await request(srv, 'GET', '/v1/board/overview', { token: srv.tokens.board });
    expect(ov.json.rows[0].title).not.toContain('hunter2-SECRET');
    const found = await request(srv, 'GET', '/v1/board/overview?q=hunter2-SECRET', {
      token: srv.tokens.board,
    });
    expect(found.json.matched).toBe(0);
  });
});
