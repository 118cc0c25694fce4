/**
 * The board shows each session's work items with honest freshness (issue 13 items 3 and 6, seed 004):
 * `observed` while the lease runs, `unknown: last reported … ago` once it expired (never idle), and
 * `stopped (completed)`; in `GET /v1/board` and on the HTML page. A real server whose clock the test moves.
 */
import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

let clock = Date.parse('2026-06-01T09:00:00.000Z');
const srv = useServer({
  deps: { now: () => new Date(clock) },
  tokens: { reporter: ['report'], board: ['board'] },
});

const page = () => request(srv, 'GET', '/', { headers: { cookie: `hansard_board=${srv.tokens.board}` } });
const board = () => request(srv, 'GET', '/v1/board', { token: srv.tokens.board });

describe('work items on the board', () => {
  it('shows observed, then unknown with the last report once the lease expired, then stopped', async () => {
    const sid = newId('s');
    const owner = { session: sid, system: 'claude-code', actor: 'coder' };
    const started = await request(srv, 'POST', '/v1/work', {
      token: srv.tokens.reporter,
      json: {
        ...owner,
        subject: { kind: 'session', ref: sid },
        mode: 'implementing',
        summary: 'the parser recovery',
        ttl_seconds: 600,
      },
    });
    expect(started.status, started.text).toBe(201);
    const id = started.json.id;

    let row = (await board()).json.sessions.find((s: { sid: string }) => s.sid === sid);
    expect(
      row.work.map((w: { id: string; freshness: { shown: string } }) => [w.id, w.freshness.shown]),
    ).toEqual([[id, 'observed']]);
    let html = (await page()).text;
    expect(html).toContain(`data-work="${id}" data-freshness="observed"`);
    expect(html).toContain('coder implementing: the parser recovery (observed)');

    clock += 20 * 60_000;
    row = (await board()).json.sessions.find((s: { sid: string }) => s.sid === sid);
    expect(row.work[0].freshness.shown).toBe('unknown');
    html = (await page()).text;
    expect(html).toContain('coder implementing: the parser recovery (unknown: last reported 20 min ago)');
    expect(html).not.toMatch(/idle/i);

    const stopped = await request(srv, 'POST', `/v1/work/${id}/stop`, {
      token: srv.tokens.reporter,
      json: { ...owner, outcome: 'completed' },
    });
    expect(stopped.status).toBe(200);
    clock += 5 * 60_000;
    html = (await page()).text;
    expect(html).toContain('(stopped (completed) 5 min ago)');
  });
});
