/**
 * `GET /v1/work?session=&limit=` (lib/service/work/list.ts listWork, docs/work.md): items without their
 * history (`GET /v1/work/{id}` answers it), newest started first, at most `limit` (default 100, 1..500).
 * Over real HTTP on the local stores. Before, a listing answered every item's whole history: 40 items of
 * 100 heavy checkpoints made one body of about 10 MB (test/attack/work-list-size.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/format/ids.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { reporter: ['report'], reader: ['read'] } });

const sid = newId('s');
const owner = { session: sid, system: 'claude-code', actor: 'coder' };

const start = (summary: string) =>
  request(srv, 'POST', '/v1/work', {
    token: srv.tokens.reporter,
    json: { ...owner, subject: { kind: 'free', ref: 'parser' }, mode: 'implementing', summary },
  });
const list = (query: string) => request(srv, 'GET', `/v1/work${query}`, { token: srv.tokens.reader });

describe('GET /v1/work', () => {
  it('lists items without history, newest first, at most limit; GET /v1/work/{id} keeps the history', async () => {
    const ids: string[] = [];
    for (let k = 0; k < 3; k++) {
      const a = await start(`item ${k}`);
      expect(a.status, a.text).toBe(201);
      ids.push(a.json.id);
    }
    const cp = await request(srv, 'POST', `/v1/work/${ids[0]}/checkpoint`, {
      token: srv.tokens.reporter,
      json: { ...owner, summary: 'step two' },
    });
    expect(cp.status, cp.text).toBe(200);

    const all = await list(`?session=${sid}`);
    expect(all.status, all.text).toBe(200);
    expect(all.json.items.map((i: { id: string }) => i.id)).toEqual([...ids].reverse());
    for (const i of all.json.items) {
      expect(i).not.toHaveProperty('history');
      expect(i.freshness.shown).toBe('observed');
    }
    expect(all.json.items[2].summary).toBe('step two');

    const two = await list(`?session=${sid}&limit=2`);
    expect(two.json.items.map((i: { id: string }) => i.id)).toEqual([ids[2], ids[1]]);

    const one = await request(srv, 'GET', `/v1/work/${ids[0]}`, { token: srv.tokens.reader });
    expect(one.json.history.map((h: { op: string }) => h.op)).toEqual(['start', 'checkpoint']);
  });

  it('refuses a limit that is not 1 to 500 (400), and takes 500', async () => {
    for (const limit of ['0', '501', '-1', '1e2', '0x10', 'ten', '']) {
      const a = await list(`?limit=${limit}`);
      expect(a.status, `limit=${limit}: ${a.text}`).toBe(400);
      expect(a.json.error.code).toBe('bad_request');
    }
    expect((await list('?limit=500')).status).toBe(200);
  });

  it('answers 100 items by default', async () => {
    const s2 = newId('s');
    for (let k = 0; k < 101; k++) {
      const a = await request(srv, 'POST', '/v1/work', {
        token: srv.tokens.reporter,
        json: {
          ...owner,
          session: s2,
          subject: { kind: 'free', ref: 'x' },
          mode: 'testing',
          summary: `n ${k}`,
        },
      });
      expect(a.status).toBe(201);
    }
    expect((await list(`?session=${s2}`)).json.items).toHaveLength(100);
    expect((await list(`?session=${s2}&limit=500`)).json.items).toHaveLength(101);
  });
});
