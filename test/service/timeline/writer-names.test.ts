/**
 * The timeline names its writers as a reader would (lib/service/timeline/writers.ts, docs/timeline.md):
 * an agent's writer by its agent, a writer without one by the one person its joins and messages are by
 * (display name, else user_id), else by its id; repeated names with " 2". The names hold on every page
 * (the first page's legend names a writer whose lines come later), reach the rows (`by`, writer start and
 * end), and the page shows them in the legend, the row chips (the id on hover) and the segment links.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../../../lib/log/index.js';
import type { ServiceContext } from '../../../lib/service/shared/context.js';
import { timelinePage } from '../../../lib/service/timeline/page.js';
import { authenticate } from '../../../lib/service/tokens/create.js';
import { request } from '../../support/http.js';
import { readLocal } from '../../support/segments.js';
import { useServer } from '../../support/server.js';
import { upload } from '../../support/stored.js';

const srv = useServer({ tokens: { board: ['board'] } });
let ctx: ServiceContext;
let sid = '';
/** writer ids by role */
const w: Record<string, string> = {};

beforeAll(async () => {
  const first = openSession(srv.workDir, { agent: 'claude-code' });
  sid = first.sid;
  const writers: Record<string, ReturnType<typeof openSession>> = { agent: first };
  for (const role of ['priya', 'sam', 'sam2', 'two', 'none'])
    writers[role] = openSession(srv.workDir, { sid });
  writers.agent2 = openSession(srv.workDir, { sid, agent: 'claude-code' });
  writers.agent!.message({ user_id: 'ana', text: 'from the agent side' });
  writers.priya!.participantJoin({ user_id: 'priya', display_name: 'Priya Raman' });
  writers.priya!.message({ user_id: 'priya', text: 'restart the payments worker' });
  writers.sam!.message({ user_id: 'sam', text: 'check the disk' });
  writers.sam2!.participantJoin({ user_id: 'sam', display_name: '' });
  writers.two!.message({ user_id: 'ana', text: 'one' });
  writers.two!.message({ user_id: 'ben', text: 'two' });
  writers.none!.note({ author: 'ops', text: 'nothing said' });
  for (const [role, s] of Object.entries(writers)) {
    w[role] = s.w;
    s.end();
    await upload(srv, srv.tenant.admin, readLocal({ sid, w: s.w, dir: s.dir, path: s.path }));
  }
  const caller = await authenticate(srv.stores.state, srv.tokens.board, new Date());
  ctx = {
    tenant: 'local',
    caller,
    segments: srv.stores.segments,
    state: srv.stores.state,
    now: () => new Date(),
  };
});

describe('writer names', () => {
  const expected = () =>
    new Map([
      [w.agent!, 'claude-code'],
      [w.priya!, 'Priya Raman'],
      [w.sam!, 'sam'],
      [w.sam2!, 'sam 2'],
      [w.two!, w.two!],
      [w.none!, w.none!],
      [w.agent2!, 'claude-code 2'],
    ]);

  it('names each writer by agent, else its one person, else its id, repeats suffixed', async () => {
    const tl = await timelinePage({ ctx, sid });
    expect(new Map(tl.writers.map((x) => [x.w, x.name]))).toEqual(expected());
    // the rows carry the same names
    for (const r of tl.rows) {
      if (r.kind === 'writer_start' || r.kind === 'writer_end')
        expect(r.name, r.kind).toBe(expected().get(r.w!));
    }
  });

  it('gives the same names on a first page of two rows, before most writers are read', async () => {
    const tl = await timelinePage({ ctx, sid, limit: 2 });
    expect(tl.more).toBe(true);
    expect(new Map(tl.writers.map((x) => [x.w, x.name]))).toEqual(expected());
  });

  it('shows the names in the legend, the chips (id on hover) and the segment links', async () => {
    const a = await request(srv, 'GET', `/sessions/${sid}`, {
      headers: { cookie: `hansard_board=${srv.tokens.board}` },
    });
    expect(a.status).toBe(200);
    const legend = a.text.match(new RegExp(`<li data-writer="${w.priya}">[\\s\\S]*?</li>`))?.[0] ?? '';
    expect(legend).toContain('>Priya Raman</span>');
    expect(legend).toContain(`<small class="mono">${w.priya}</small>`);
    expect(a.text).toMatch(new RegExp(`<span class="chip wc\\d+" title="${w.priya}">Priya Raman</span>`));
    expect(a.text).toContain('Segment of Priya Raman');
    expect(a.text).toContain('Segment of sam 2');
    expect(a.text).toContain(`Segment of ${w.two}`);
  });
});
