/**
 * The text replay's fast path (issue 16: `replayBytes(…, 'text')`, EventLines.textLine, the Attributor's
 * kept windows and shared arrays, the kept marks of lib/log/replay/text-mark.ts, TextOut) gives the reference's
 * bytes (`replayBatches`) on sessions made to break what it keeps: many writers so windows are contested
 * and kept across other turns, several actions a turn (cascades from kept windows), message ids written
 * twice by different people or first with no user_id (a kept temporal mark names authors), user ids and
 * ids that need escaping or are not ASCII (the Latin-1 contested mark), corrections of messages' user_id
 * and text, caused_by and context recorded, unknown turns, and output buffers smaller than a line.
 * Also: SizedFifo's eviction, and attributions equal whether windows are kept, shared or made each time.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTs } from '../../lib/log/format/time.js';
import { newId, replayBatches, replayBytes, sessionDirSegments } from '../../lib/log/index.js';
import { Attributor } from '../../lib/log/replay/attribution.js';
import { SizedFifo } from '../../lib/log/replay/attribution-window.js';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'hansard-fast-text-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every event of the session as parsed objects, in the order each writer wrote them, keyed by writer. */
type Ev = Record<string, unknown>;

/**
 * `writers` writers, each a person (messages) or an agent (turns, actions, results, outputs), ~`lines`
 * events each, clocks ~1 ms an event with jitter so writers interleave. `hostile` adds the odd cases.
 */
function generate(
  seed: number,
  writers: number,
  lines: number,
  hostile: boolean,
  users = hostile
    ? ['priya', 'sam', 'zoë', 'ali\u00adce', 'eve\nmallory', 'bob\u202e', 'dan']
    : ['priya', 'sam', 'dan', 'lee', 'kim'],
): string {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const sid = newId('s');
  const dir = join(root, sid);
  mkdirSync(dir);
  const ws = Array.from({ length: writers }, () => newId('w')).sort();
  const written: string[] = [];
  const t0 = Date.UTC(2026, 10, 1) * 1000;
  ws.forEach((w, wi) => {
    const out: string[] = [];
    let seq = 0;
    let ts = '';
    const line = (type: string, id: string, fields: Ev, sameTs = false) => {
      seq += 1;
      if (!sameTs) ts = formatTs(t0 + seq * 1000 + Math.floor(rand() * 900));
      out.push(JSON.stringify({ v: 3, sid, w, seq, id, ts, mono: seq / 1000, type, ...fields }));
    };
    line('writer.start', w, {
      writer_id: w,
      meta: { agent: wi % 3 === 0 ? null : `bot-${wi}`, app: null, host: 'h', pid: wi },
      redacted: [],
    });
    const person = wi % 3 === 0;
    let turn = '';
    const actions: string[] = [];
    for (let k = 0; k < lines; k++) {
      if (person) {
        const r = rand();
        let id = newId('m');
        // A message id written again (by another person, or first with no user_id): authors change.
        if (hostile && written.length > 0 && r < 0.08) id = pick(written);
        else if (hostile && r < 0.1) id = `m_ctl\u001b${k}`;
        written.push(id);
        const user = hostile && r > 0.95 ? 7 : pick(users);
        line('message', id, { user_id: user, text: `look at ${k}\n\tplease`, client_ts: null, redacted: [] });
        if (hostile && rand() < 0.1)
          line('correction', newId('e'), {
            target_id: pick(written),
            field: pick(['user_id', 'text']),
            value: pick(['sam', 'zoë', 'new text']),
            reason: 'fix',
            redacted: [],
          });
        continue;
      }
      const r = rand();
      if (r < 0.18 || turn === '') {
        turn = newId('t');
        actions.length = 0;
        const ctx =
          hostile && rand() < 0.2
            ? pick([[], written.slice(-2), [newId('m')]])
            : hostile && rand() < 0.1
              ? 5
              : null;
        line('turn.start', turn, { turn_id: turn, context_message_ids: ctx });
      } else if (r < 0.25) {
        // A burst at one instant: action, its result, the next action (a cascade, nothing between).
        for (let b = 0; b < 3; b++) {
          const a = newId('a');
          actions.push(a);
          const input = { command: `step ${b}` };
          line(
            'agent.action',
            a,
            { turn_id: turn, tool: 'Bash', input, call_id: null, caused_by: null },
            b > 0,
          );
          if (b < 2)
            line('agent.action_result', newId('e'), { action_id: a, status: 'ok', output: 'ok' }, true);
        }
      } else if (r < 0.5) {
        const a = newId('a');
        actions.push(a);
        const causedBy = hostile && rand() < 0.15 ? pick([[], written.slice(-1), 'x']) : null;
        const tid = hostile && rand() < 0.05 ? newId('t') : turn;
        line('agent.action', a, {
          turn_id: tid,
          tool: 'Bash',
          input: { command: `ls ${k}` },
          call_id: null,
          caused_by: causedBy,
          redacted: [],
        });
      } else if (r < 0.75 && actions.length > 0) {
        line('agent.action_result', newId('e'), {
          action_id: pick(actions),
          status: 'ok',
          output: `out ${k}`,
          error: null,
          exit_code: 0,
          redacted: [],
        });
      } else if (r < 0.9) {
        line('agent.output', newId('e'), { turn_id: turn, text: `said ${k}`, caused_by: null, redacted: [] });
      } else line('turn.end', newId('e'), { turn_id: turn, status: 'completed' });
    }
    writeFileSync(join(dir, `${w}.jsonl`), `${out.join('\n')}\n`);
  });
  return dir;
}

async function textOf(dir: string, fast: boolean, outputBytes?: number): Promise<string> {
  const parts: Buffer[] = [];
  if (fast) {
    for await (const b of replayBytes(sessionDirSegments(dir), 'text', { outputBytes }))
      parts.push(Buffer.from(b));
  } else {
    for await (const lines of replayBatches(sessionDirSegments(dir), 'text', {}))
      parts.push(Buffer.from(lines.join(''), 'utf8'));
  }
  return Buffer.concat(parts).toString('utf8');
}

describe('the fast text replay gives the reference bytes', () => {
  for (const [seed, writers, hostile] of [
    [1, 12, false],
    [2, 12, true],
    [3, 30, true],
    [4, 5, true],
  ] as const) {
    it(`on ${writers} writers${hostile ? ' with repeated ids, odd users and corrections' : ''} (seed ${seed})`, async () => {
      const dir = generate(seed, writers, 120, hostile);
      const want = await textOf(dir, false);
      expect(want).toContain('contested');
      if (hostile) expect(want).toContain('cascade');
      expect(await textOf(dir, true)).toBe(want);
      // Output buffers smaller than a line: each such line gets a buffer of its own.
      expect(await textOf(dir, true, 200)).toBe(want);
    });
  }

  it('on user ids that are safe to show but not ASCII (a contested mark then is no Latin-1 copy)', async () => {
    const dir = generate(6, 9, 80, false, ['priya', 'zoë', 'sam']);
    const want = await textOf(dir, false);
    expect(want).toContain('zoë m_');
    expect(await textOf(dir, true)).toBe(want);
  });

  it('on a temporal window whose message id gets another author between two events of the turn', async () => {
    const sid = newId('s');
    const dir = join(root, sid);
    mkdirSync(dir);
    const [p, a] = [newId('w'), newId('w')].sort() as [string, string];
    const [m1, m2] = [newId('m'), newId('m')];
    const ev = (w: string, seq: number, ms: number, id: string, type: string, f: Ev) =>
      JSON.stringify({
        v: 3,
        sid,
        w,
        seq,
        id,
        ts: formatTs(Date.UTC(2026, 0, 1) * 1000 + ms * 1000),
        mono: seq,
        type,
        ...f,
      });
    const msg = (seq: number, ms: number, id: string, user: unknown) =>
      ev(p, seq, ms, id, 'message', { user_id: user, text: 'hi', client_ts: null, redacted: [] });
    const act = (seq: number, ms: number, turn: string) =>
      ev(a, seq, ms, newId('a'), 'agent.action', {
        turn_id: turn,
        tool: 'Bash',
        input: {},
        call_id: null,
        caused_by: null,
      });
    const [t0, t1, t2] = [newId('t'), newId('t'), newId('t')];
    // Turn 1's window: m1 by priya; m1 then comes again by sam. Turn 2's: m2 with no user_id, then by sam.
    writeFileSync(
      join(dir, `${p}.jsonl`),
      `${[msg(1, 1, m1, 'priya'), msg(2, 4, m1, 'sam'), msg(3, 10, m2, 7), msg(4, 14, m2, 'sam')].join('\n')}\n`,
    );
    writeFileSync(
      join(dir, `${a}.jsonl`),
      `${[
        ev(a, 1, 2, t1, 'turn.start', { turn_id: t1, context_message_ids: null }),
        act(2, 3, t1),
        act(3, 5, t1),
        // a turn of its own between, so that turn 2's window starts after m1's second message
        ev(a, 4, 6, t0, 'turn.start', { turn_id: t0, context_message_ids: null }),
        ev(a, 5, 12, t2, 'turn.start', { turn_id: t2, context_message_ids: null }),
        act(6, 13, t2),
        act(7, 15, t2),
      ].join('\n')}\n`,
    );
    const want = await textOf(dir, false);
    expect(want).toContain(`[← priya ${m1}: temporal 0.7]`);
    expect(want).toContain(`[← sam ${m1}: temporal 0.7]`);
    expect(want).toContain(`[← ${m2}: temporal 0.7]`);
    expect(want).toContain(`[← sam ${m2}: temporal 0.7]`);
    expect(await textOf(dir, true)).toBe(want);
  });
});

describe('kept windows', () => {
  it('attributions are the same kept, shared, or made again for every event', async () => {
    const dir = generate(5, 20, 150, true);
    const events: Ev[] = [];
    for await (const lines of replayBatches(sessionDirSegments(dir), 'ndjson', {}))
      for (const l of lines.join('').split('\n')) if (l) events.push(JSON.parse(l) as Ev);
    const run = (a: Attributor) =>
      events.map((e) => a.pushFields(e.type as string, e.id as string, e.w as string, e)).filter(Boolean);
    const plain = run(new Attributor());
    expect(plain.some((a) => a!.basis === 'cascade')).toBe(true);
    expect(run(new Attributor({ shareWindows: true }))).toEqual(plain);
    expect(run(new Attributor({ shareWindows: true, keptWindowIds: 0 }))).toEqual(plain);
    expect(run(new Attributor({ keptWindowIds: 50 }))).toEqual(plain);
    // And pushFields is push of the same events.
    const viaPush = new Attributor();
    expect(events.map((e) => viaPush.push(e)).filter(Boolean)).toEqual(plain);
  });

  it('SizedFifo keeps its newest entries within its budget', () => {
    const f = new SizedFifo<string, number>(10);
    f.set('a', 1, 4);
    f.set('b', 2, 4);
    f.set('c', 3, 4); // 12 > 10: a goes
    expect([f.get('a'), f.get('b'), f.get('c')]).toEqual([undefined, 2, 3]);
    f.set('b', 20, 2); // b set again: its new place is the newest
    f.set('d', 4, 5); // 3 + 4 + 5 = 11 > 10: c goes (the oldest), not b
    expect([f.get('b'), f.get('c'), f.get('d')]).toEqual([20, undefined, 4]);
    f.set('e', 5, 11); // larger than the budget: not kept, nothing evicted
    expect([f.get('e'), f.get('b'), f.get('d')]).toEqual([undefined, 20, 4]);
    const g = new SizedFifo<number, number>(3);
    for (let i = 0; i < 5000; i++) g.set(i, i, 1);
    expect([g.get(4996), g.get(4997), g.get(4998), g.get(4999)]).toEqual([undefined, 4997, 4998, 4999]);
  });
});
