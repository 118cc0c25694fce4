/**
 * `timelinePage({ at })` (issue 14 finding 3): the page that holds a row, found by its anchor, is the very
 * page the "Load more" links reach (same `after`, same rows), with or without the person filter; an anchor
 * of no row gives the first page. Real local stores over HTTP upload (test/support/server.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../../../lib/log/index.js';
import type { ServiceContext } from '../../../lib/service/shared/context.js';
import { type TimelinePage, timelinePage } from '../../../lib/service/timeline/page.js';
import { authenticate } from '../../../lib/service/tokens/create.js';
import { readLocal } from '../../support/segments.js';
import { useServer } from '../../support/server.js';
import { upload } from '../../support/stored.js';

const srv = useServer({ tokens: { board: ['board'] } });
let ctx: ServiceContext;
let sid = '';
const LIMIT = 7;

/** Every page of the session (`person` filter or not), walked by `next_after` as the links do. */
async function walk(person: string | null): Promise<TimelinePage[]> {
  const pages: TimelinePage[] = [];
  let after = -1;
  for (;;) {
    const p = await timelinePage({ ctx, sid, after, limit: LIMIT, person });
    pages.push(p);
    if (!p.more || p.next_after === null) return pages;
    after = p.next_after;
  }
}

beforeAll(async () => {
  const s = openSession(srv.workDir, { agent: 'claude-code' });
  sid = s.sid;
  const m1 = s.message({ user_id: 'ana', text: 'first ask' });
  for (let i = 0; i < 17; i++) s.note({ author: 'ops', text: `note ${i}` });
  const t = s.turnStart({ context_message_ids: [m1.id] });
  const a = s.action({ turn_id: t.id, tool: 'bash', input: { command: 'ls' } });
  for (let i = 0; i < 9; i++) s.note({ author: 'ops', text: `later ${i}` });
  s.actionResult({ action_id: a.id, status: 'ok', exit_code: 0 });
  s.message({ user_id: 'ana', text: 'second ask' });
  for (let i = 0; i < 12; i++) s.note({ author: 'ops', text: `last ${i}` });
  s.turnEnd({ turn_id: t.id, status: 'completed' });
  s.end();
  await upload(srv, srv.tenant.admin, readLocal({ sid, w: s.w, dir: s.dir, path: s.path }));
  const caller = await authenticate(srv.stores.state, srv.tokens.board, new Date());
  ctx = {
    tenant: 'local',
    caller,
    segments: srv.stores.segments,
    state: srv.stores.state,
    now: () => new Date(),
  };
});

describe('the page that holds a row', () => {
  for (const person of [null, 'ana']) {
    it(`is the page the links reach, for every row (person ${person ?? 'none'})`, async () => {
      const pages = await walk(person);
      expect(pages.length).toBeGreaterThan(person === null ? 5 : 0);
      let after = -1;
      for (const p of pages) {
        expect(p.after).toBe(after);
        for (const row of p.rows) {
          const found = await timelinePage({ ctx, sid, limit: LIMIT, person, at: row.anchor });
          expect(found.after, row.anchor).toBe(p.after);
          expect(found.rows.map((r) => r.anchor)).toEqual(p.rows.map((r) => r.anchor));
          expect(found.more).toBe(p.more);
          expect(found.next_after).toBe(p.next_after);
        }
        after = p.next_after ?? after;
      }
    });
  }

  it('ignores `after` when given `at`, and gives the first page for an anchor of no row', async () => {
    const [first, second] = await walk(null);
    const back = await timelinePage({ ctx, sid, limit: LIMIT, after: 30, at: first!.rows[2]!.anchor });
    expect(back.after).toBe(-1);
    expect(back.rows.map((r) => r.pos)).toEqual(first!.rows.map((r) => r.pos));
    const fwd = await timelinePage({ ctx, sid, limit: LIMIT, at: second!.rows.at(-1)!.anchor });
    expect(fwd.after).toBe(first!.next_after);
    const none = await timelinePage({ ctx, sid, limit: LIMIT, at: 'e-m_nothing' });
    expect(none.after).toBe(-1);
    expect(none.rows.map((r) => r.pos)).toEqual(first!.rows.map((r) => r.pos));
    expect(none.more).toBe(true);
  });
});
