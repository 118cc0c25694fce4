/**
 * The overview's cost against session summaries a writer filled to their bounds (lib/store/session-summary.ts:
 * 20 people and 20 agents of 200 characters, a 160-character title, a note of up to 2000). Each summary
 * stays bounded, but nothing bounds what the overview reads in all: every `GET /`, `/board/fragment`,
 * `/v1/board/overview` and every check of every live stream (once a second) lists the tenant's summaries
 * (shared for only 500 ms), builds the facets from every name of every session, filters and sorts them
 * all. Measured on `hansard serve`'s local stores with 5,000 sessions whose writer used 25 emoji-long
 * user_ids and a 180-character agent name: 24.6 MB of summaries; 1.1-2.1 s per overview (48 ms / 8 ms
 * with ordinary sessions), 20 concurrent overviews 14 s (136 ms ordinary): one open board tab then keeps
 * the event loop busy all the time. Anyone with an (unbound) ingest token can write such sessions.
 * Seeded here straight through the store (the summaries ingest would write), over real HTTP.
 *
 * Fixed: summaries keep names of at most 64 units, the SQLite listing reads a row's merged columns again
 * only when its `summary_rev` moved, the facets are one pass per shared listing.
 */
import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/format/ids.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { board: ['board'] } });
const SESSIONS = 5000;

describe('the overview over summaries filled to their bounds', () => {
  // FAULT: 5,000 sessions with summaries at their per-item bounds (20×200-char people and agents) make each overview take >1 s (ordinary: <50 ms); every live stream pays it every second.
  it('answers a page of the overview in well under a second', async () => {
    const { state } = srv.stores;
    const at = new Date().toISOString();
    const name = (k: number, i: number, p: string) => `${p}${k}-${i}-`.padEnd(200, 'x');
    for (let k = 0; k < SESSIONS; k++) {
      const sid = newId('s');
      const w = newId('w');
      await state.advanceWriter('local', sid, w, 0, {
        length: 100,
        lines: 1,
        last_seq: 0,
        ended: false,
        agent: 'a',
        provenance: null,
        token_id: null,
        token_label: null,
        mixed_tokens: false,
        chunk: { offset: 0, length: 100, sha256: '0'.repeat(64), lines: 1, last_seq: 0 },
        chain: '0'.repeat(64),
        digest_due: false,
        at,
      });
      await state.mergeSessionSummary('local', sid, {
        title: { text: 'T'.repeat(160), at: k },
        people: Array.from({ length: 20 }, (_, i) => name(k, i, 'u')),
        agents: Array.from({ length: 20 }, (_, i) => name(k, i, 'a')),
      });
    }
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      const a = await request(srv, 'GET', '/v1/board/overview?limit=1', { token: srv.tokens.board });
      times.push(performance.now() - t);
      expect(a.status).toBe(200);
      expect(a.json.total).toBe(SESSIONS);
    }
    times.sort((x, y) => x - y);
    // The fault took over a second on a quiet machine (several beside a second suite); the fix about 100 ms
    // quiet and 440 ms beside a second suite (2 cores, 2026-12-07). Under a second, as the case says: a
    // bound for a loaded machine, not a benchmark (docs/benchmarks.md measures the overview).
    expect(times[1]).toBeLessThan(1000);
  }, 180_000);
});
