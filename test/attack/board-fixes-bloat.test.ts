/**
 * Bloated summaries another way: `fixes` (lib/store/session-summary.ts `mergeSummary`) keeps the
 * corrections of the shown messages and `FIXES_PENDING_MAX` (20) others, a bound on their number but not
 * their size: a correction's `target_id` is any string (lib/log/format/events.ts `correction`), kept whole. A
 * writer that sends 20 corrections whose target ids are 1 MB each (five chunks of 4 MB) leaves 20 MB in
 * its session's row, which every later merge of that session reads, parses, sorts and writes back inside
 * one synchronous SQLite transaction: each small chunk of the session then takes ~300 ms (was ~5 ms), the
 * whole server's event loop blocked meanwhile; with 5 MB ids it is over a second. On DynamoDB the same
 * item passes the 400 KB item limit, so the merge fails for good. Over real HTTP, local stores.
 *
 * The case found a fault, now fixed (`Was a FAULT (fixed): …`).
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { board: ['board'] } });

describe('pending corrections with huge target ids', () => {
  // Was a FAULT (fixed): the summary keeps pending corrections' target_id uncut: 20 corrections of 1 MB ids store 20 MB in the session row and every later chunk of the session re-parses it (~300 ms of blocked event loop each).
  it('keep the session row small, so later merges stay cheap', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const s = openSession(mkdtempSync(join(srv.workDir, 'fx-')), { agent: 'coder' });
    s.message({ user_id: 'alice', text: 'hello' });
    let sent = 0;
    const post = async () => {
      const body = readFileSync(s.path).subarray(sent);
      const r = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=${sent}`, {
        token: srv.admin,
        body,
      });
      expect(r.status, r.text.slice(0, 300)).toBe(201);
      sent += body.length;
    };
    await post();
    for (let c = 0; c < 5; c++) {
      for (let i = 0; i < 4; i++)
        s.correct({
          target_id: `m_${c}_${i}_`.padEnd(1_000_000, 'x'),
          field: 'text',
          value: 'v',
          reason: 'r',
        });
      await post();
    }
    const db = new Database(join(srv.dataDir, 'state.sqlite'), { readonly: true });
    try {
      const row = db.prepare('SELECT length(fixes) AS n FROM sessions WHERE sid = ?').get(s.sid) as {
        n: number;
      };
      expect(row.n).toBeLessThan(100_000);
    } finally {
      db.close();
    }
    const times: number[] = [];
    for (let k = 0; k < 3; k++) {
      s.message({ user_id: `p${k}`, text: 'hi' });
      const t = performance.now();
      await post();
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    expect(times[1]).toBeLessThan(100);
  }, 120_000);
});
