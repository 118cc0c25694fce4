/**
 * The structured timeline (lib/service/timeline/page.ts) of the synthetic 50-row session
 * (test/support/timeline-session.ts), stored through the real app on loopback: every row kind with its
 * fields, attribution, corrections with the value they replaced, the Declared report where it was made
 * with its verdicts, the quarantined line where it sits, verify findings at their row, paging that gives
 * every row exactly once, and the person filter.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { newId, openSession } from '../../../lib/log/index.js';
import type { ServiceContext } from '../../../lib/service/shared/context.js';
import { type TimelineRow, timelinePage } from '../../../lib/service/timeline/page.js';
import { authenticate } from '../../../lib/service/tokens/create.js';
import { readLocal, writeSession } from '../../support/segments.js';
import { useServer } from '../../support/server.js';
import { postChunk, upload } from '../../support/stored.js';
import {
  FIXTURE_KINDS,
  HOSTILE,
  storeTimelineSession,
  type TimelineSession,
} from '../../support/timeline-session.js';

const srv = useServer({ tokens: { board: ['board'], reporter: ['report'] } });
let s: TimelineSession;
let ctx: ServiceContext;

beforeAll(async () => {
  s = await storeTimelineSession(srv, srv.workDir, srv.tenant.admin, srv.tokens.reporter);
  const caller = await authenticate(srv.stores.state, srv.tokens.board, new Date());
  ctx = {
    tenant: 'local',
    caller,
    segments: srv.stores.segments,
    state: srv.stores.state,
    now: () => new Date(),
  };
}, 60_000);

/** This process's open descriptors of files under `root`. */
function openUnder(root: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(root)) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

type Kind = TimelineRow['kind'];
const of = <K extends Kind>(rows: TimelineRow[], kind: K) =>
  rows.filter((r): r is Extract<TimelineRow, { kind: K }> => r.kind === kind);
const byId = (rows: TimelineRow[], id: string) => rows.find((r) => 'id' in r && r.id === id)!;

describe('timelinePage', () => {
  it('gives every row of the session, each kind with its fields, on one page', async () => {
    const tl = await timelinePage({ ctx, sid: s.sid });
    expect(tl.rows).toHaveLength(s.rows);
    expect(s.rows).toBe(50);
    expect(tl.more).toBe(false);
    expect(tl.next_after).toBeNull();
    const kinds = new Set(tl.rows.map((r) => r.kind));
    for (const k of FIXTURE_KINDS) expect(kinds, k).toContain(k);
    // positions run 0..n-1 and anchors are unique
    expect(tl.rows.map((r) => r.pos)).toEqual([...Array(s.rows).keys()]);
    expect(new Set(tl.rows.map((r) => r.anchor)).size).toBe(s.rows);
    expect(tl.title).toBe(HOSTILE.message);
    expect(tl.people).toEqual([
      { user_id: 'priya', display_name: 'Priya' },
      { user_id: 'sam', display_name: 'Sam' },
    ]);
    expect(tl.writers.map((w) => [w.w, w.name]).sort()).toEqual(
      [
        [s.wa, HOSTILE.agent],
        [s.wb, 'reviewer'],
      ].sort(),
    );
  });

  it('summarises inputs, and shows results with status, exit code, duration and a cut output', async () => {
    const { rows } = await timelinePage({ ctx, sid: s.sid });
    const actions = of(rows, 'action');
    expect(actions.map((a) => a.summary)).toEqual([
      'systemctl restart payments',
      'npm test',
      'npm run lint',
      'src/payments.ts',
      'src/lint.ts',
      'eslint --fix src',
      'git commit -am fix',
      './deploy.sh production',
    ]);
    const failing = byId(rows, s.ids.failingResult) as Extract<TimelineRow, { kind: 'result' }>;
    expect(failing).toMatchObject({ status: 'error', exit_code: 127, error: './deploy.sh: not found' });
    expect(failing.duration_ms).toBe(1000);
    expect(failing.action_anchor).toBe(`e-${s.ids.failing}`);
    expect(failing.turn).toBe((byId(rows, s.ids.failing) as { turn: string }).turn);
    const long = of(rows, 'result').find((r) => r.output.startsWith('ok 1'))!;
    expect(Buffer.byteLength(long.output)).toBeLessThanOrEqual(2048);
    expect(long.more_bytes).toBe(3000 - Buffer.byteLength(long.output));
    expect(long.duration_ms).toBe(3000);
  });

  it('attributes actions and outputs, linking the messages by anchor', async () => {
    const { rows } = await timelinePage({ ctx, sid: s.sid });
    const first = of(rows, 'action')[0]!;
    expect(first.attribution).toMatchObject({
      basis: 'recorded_context',
      messages: [{ id: s.ids.m1, anchor: `e-${s.ids.m1}`, user_id: 'priya' }],
    });
    const contested = byId(rows, s.ids.contested) as Extract<TimelineRow, { kind: 'action' }>;
    expect(contested.attribution?.basis).toBe('contested');
    expect(contested.attribution?.candidates?.map((c) => c.user_id)).toEqual(['sam', 'priya']);
    const cascade = byId(rows, s.ids.cascade) as Extract<TimelineRow, { kind: 'action' }>;
    expect(cascade.attribution).toMatchObject({
      basis: 'cascade',
      cascade_from: { id: s.ids.contested, anchor: `e-${s.ids.contested}` },
    });
    const dangling = byId(rows, s.ids.dangling) as Extract<TimelineRow, { kind: 'output' }>;
    expect(dangling.attribution).toMatchObject({ basis: 'recorded', messages: [{ anchor: null }] });
    // verify's finding about it is at its row
    expect(dangling.problems.map((p) => p.code)).toContain('dangling_reference');
  });

  it('shows the corrected value with what it replaced, and the correction with old → new', async () => {
    const { rows } = await timelinePage({ ctx, sid: s.sid });
    const corrected = byId(rows, s.ids.corrected) as Extract<TimelineRow, { kind: 'result' }>;
    expect(corrected.exit_code).toBe(2);
    expect(corrected.corrected).toEqual([
      {
        field: 'exit_code',
        by: s.ids.correction,
        by_anchor: `e-${s.ids.correction}`,
        was: 1,
        reason: 'the runner exits 2 on lint errors',
      },
    ]);
    const correction = byId(rows, s.ids.correction) as Extract<TimelineRow, { kind: 'correction' }>;
    expect(correction).toMatchObject({
      target_anchor: `e-${s.ids.corrected}`,
      field: 'exit_code',
      value: 2,
      was: { value: 1 },
      by: 'reviewer',
      refused: null,
    });
  });

  it('puts the Declared report where it was made, with a supported and an unsupported claim', async () => {
    const { rows } = await timelinePage({ ctx, sid: s.sid });
    const i = rows.findIndex((r) => r.kind === 'declared');
    expect((rows[i - 1] as { id: string }).id).toBe(s.ids.declaredBefore);
    const d = rows[i] as Extract<TimelineRow, { kind: 'declared' }>;
    expect(d.anchor).toBe('d-0');
    expect(d.report.note).toBe(HOSTILE.statusNote);
    const verdicts = d.report.events.flatMap((e) => e.evidence.map((x) => [x.ref, x.check.verdict]));
    expect(verdicts).toEqual([
      ['npm test', 'supported'],
      ['npm run lint', 'unsupported'],
    ]);
  });

  it('shows the quarantined line where it sits, escaped and cut, with its writer and line', async () => {
    const { rows } = await timelinePage({ ctx, sid: s.sid });
    const [q] = of(rows, 'quarantined');
    // a JSON line cut in the middle: verify's `truncated_line`, shown once (as the row's code)
    expect(q).toMatchObject({ w: s.wb, line: s.quarantinedLine, code: 'truncated_line', problems: [] });
    expect(q!.excerpt).toContain('torn <b>half');
    expect(q!.anchor).toBe(`q-${s.wb}-${s.quarantinedLine}`);
    // right after the correction, B's event before it
    const i = rows.indexOf(q!);
    expect((rows[i - 1] as { id: string }).id).toBe(s.ids.correction);
  });

  it('pages: every row exactly once, in order, and the last page says there is no more', async () => {
    const whole = (await timelinePage({ ctx, sid: s.sid })).rows.map((r) => r.anchor);
    const seen: string[] = [];
    let after = -1;
    for (let pages = 0; pages < 20; pages++) {
      const p = await timelinePage({ ctx, sid: s.sid, after, limit: 7 });
      seen.push(...p.rows.map((r) => r.anchor));
      if (!p.more) break;
      expect(p.rows).toHaveLength(7);
      after = p.next_after!;
    }
    expect(seen).toEqual(whole);
  });

  it("filters by person: their messages and the turns attributed to them, not the others'", async () => {
    const { rows } = await timelinePage({ ctx, sid: s.sid, person: 'sam' });
    const ids = new Set(rows.map((r) => ('id' in r ? r.id : r.anchor)));
    expect(of(rows, 'message').map((m) => m.user_id)).toEqual(['sam', 'sam']);
    expect(ids).toContain(s.ids.contested);
    expect(ids).toContain(s.ids.cascade);
    expect(ids).toContain(s.ids.failing);
    expect(ids).toContain(s.ids.failingResult);
    expect(ids).not.toContain(s.ids.m1);
    expect(of(rows, 'action').map((a) => a.summary)).toEqual([
      'src/lint.ts',
      'eslint --fix src',
      './deploy.sh production',
    ]);
    // a turn's start comes before its rows
    for (const a of of(rows, 'action')) {
      const start = rows.findIndex((r) => r.kind === 'turn_start' && r.turn === a.turn);
      expect(start).toBeGreaterThanOrEqual(0);
      expect(start).toBeLessThan(rows.indexOf(a));
    }
    // positions are the whole timeline's
    expect(rows.every((r, i) => i === 0 || r.pos > rows[i - 1]!.pos)).toBe(true);
  });

  it('pages under the person filter: the same rows as one page, each once', async () => {
    const whole = (await timelinePage({ ctx, sid: s.sid, person: 'sam' })).rows.map((r) => r.anchor);
    const seen: string[] = [];
    let after = -1;
    for (let pages = 0; pages < 20; pages++) {
      const p = await timelinePage({ ctx, sid: s.sid, after, limit: 2, person: 'sam' });
      seen.push(...p.rows.map((r) => r.anchor));
      if (!p.more) break;
      after = p.next_after!;
    }
    expect(seen).toEqual(whole);
  });

  it('shows a finding about no row under its writer (a segment left open)', async () => {
    const open = writeSession(srv.workDir, { open: true });
    await upload(srv, srv.tenant.admin, open);
    const tl = await timelinePage({ ctx, sid: open.sid });
    expect(tl.writers).toHaveLength(1);
    expect(tl.writers[0]!.problems.map((p) => p.code)).toEqual(['segment_open']);
    expect(tl.rows.flatMap((r) => r.problems)).toEqual([]);
  });

  it('shows what verify finds in a chunk that arrived after the last page was made', async () => {
    const open = writeSession(srv.workDir, { open: true });
    await upload(srv, srv.tenant.admin, open);
    const before = await timelinePage({ ctx, sid: open.sid });
    expect(before.rows.flatMap((r) => r.problems.map((p) => p.code))).toEqual([]);
    // the next event skips four seqs: verify's seq_gap, at that row
    const last = JSON.parse(open.lines.at(-1)!.toString()) as { seq: number; mono: number };
    const ts = `${new Date().toISOString().slice(0, 23)}000Z`;
    const gap = {
      v: 3,
      sid: open.sid,
      w: open.w,
      seq: last.seq + 5,
      id: newId('e'),
      ts,
      mono: last.mono + 1,
    };
    const line = `${JSON.stringify({ ...gap, type: 'note', author: 'late', text: 'after a gap' })}\n`;
    const a = await postChunk(srv, srv.tenant.admin, open.sid, open.w, open.bytes.length, line);
    expect(a.status, a.text).toBe(201);
    const after = await timelinePage({ ctx, sid: open.sid });
    expect(after.rows.flatMap((r) => r.problems.map((p) => p.code))).toEqual(['seq_gap']);
  });

  it('closes every segment it opened once the page is full', async () => {
    // larger than a read (128 KiB a segment here), so the page is full long before the segment ends
    const w = openSession(srv.workDir, { agent: 'noter' });
    for (let i = 0; i < 3000; i++) w.note({ author: 'noter', text: `note ${i} ${'x'.repeat(100)}` });
    w.end();
    await upload(srv, srv.tenant.admin, readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path }));
    const p = await timelinePage({ ctx, sid: w.sid, limit: 3 });
    expect(p.rows).toHaveLength(3);
    expect(p.more).toBe(true);
    // a stream's descriptor closes a tick after the merge lets it go
    const segments = join(srv.dataDir, 'tenants');
    let open = openUnder(segments);
    for (let i = 0; open > 0 && i < 50; i++) {
      await new Promise((r) => setTimeout(r, 10));
      open = openUnder(segments);
    }
    expect(open).toBe(0);
  });

  it('stops with the signal', async () => {
    const ac = new AbortController();
    ac.abort(new DOMException('gone', 'AbortError'));
    await expect(timelinePage({ ctx, sid: s.sid, signal: ac.signal })).rejects.toThrow('gone');
  });
});
