import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeEvent } from '../../lib/log/format/codec.js';
import type { LogEvent } from '../../lib/log/format/events.js';
import { mergeSegments } from '../../lib/log/read/merge.js';
import { sessionDirSources } from '../../lib/log/read/session-dir.js';
import {
  type Attribution,
  Attributor,
  attribute,
  attributeStream,
  CASCADE_DECAY,
  CONTESTED_TOTAL_CONFIDENCE,
  TEMPORAL_CONFIDENCE,
} from '../../lib/log/replay/attribution.js';
import { openSession, type SessionWriter } from '../../lib/log/write/writer.js';

let tmp: string;
/** One clock shared by every writer of a test, 1 ms a tick: the merged order is the order written. */
let now: number;
const clock = (): number => {
  now += 1000;
  return now;
};

beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'hansard-attribution-'));
  now = Date.UTC(2026, 7, 12, 20, 44, 44) * 1000;
});
afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** A new session's first writer (an agent process), or another writer of the same session. */
function writer(agent: string | null, session?: SessionWriter): SessionWriter {
  return openSession(session ? session.dir : tmp, { agent, host: 'demo-host', pid: 1 }, { clock });
}

/** The session read back from disk, merged and decoded. */
async function readBack(s: SessionWriter): Promise<LogEvent[]> {
  const out: LogEvent[] = [];
  for await (const m of mergeSegments(sessionDirSources(s.dir))) out.push(decodeEvent(m.event));
  return out;
}

/** Every attribution of the session, by event id. */
async function attributionsOf(s: SessionWriter): Promise<Map<string, Attribution>> {
  return new Map(attribute(await readBack(s)).map((a) => [a.event_id, a]));
}

describe('recorded bases', () => {
  it('recorded: a non-empty caused_by gives those ids at 1.0', async () => {
    const s = writer('bot');
    const m1 = s.message({ user_id: 'priya', text: 'restart the payments worker' });
    const m2 = s.message({ user_id: 'sam', text: 'and clear the queue' });
    const t = s.turnStart();
    const a = s.action({ turn_id: t.turn_id, tool: 'Bash', input: { command: 'x' }, caused_by: [m1.id] });
    s.end();
    const got = (await attributionsOf(s)).get(a.id)!;
    expect(got).toEqual({
      event_id: a.id,
      type: 'agent.action',
      turn_id: t.turn_id,
      message_ids: [m1.id],
      basis: 'recorded',
      confidence: 1,
    });
    expect(got.message_ids).not.toContain(m2.id);
  });

  /** Same session shape; only the action's caused_by differs. */
  async function noCauseOrNull(causedBy: string[] | null) {
    const s = writer('bot');
    const m = s.message({ user_id: 'priya', text: 'restart the payments worker' });
    const t = s.turnStart();
    const a = s.action({ turn_id: t.turn_id, tool: 'Bash', caused_by: causedBy });
    s.end();
    return { m, a, got: (await attributionsOf(s)).get(a.id)! };
  }

  it('recorded_no_cause: caused_by [] is a recorded fact (no ids, 1.0)', async () => {
    const { got } = await noCauseOrNull([]);
    expect(got.basis).toBe('recorded_no_cause');
    expect(got.message_ids).toEqual([]);
    expect(got.confidence).toBe(1);
  });

  it('temporal: the same session with caused_by null is inferred from the window', async () => {
    const { m, got } = await noCauseOrNull(null);
    expect(got.basis).toBe('temporal');
    expect(got.message_ids).toEqual([m.id]);
    expect(got.confidence).toBe(TEMPORAL_CONFIDENCE);
  });

  it('recorded_context: caused_by null, the turn has context_message_ids', async () => {
    const s = writer('bot');
    const m1 = s.message({ user_id: 'priya', text: 'one' });
    s.message({ user_id: 'sam', text: 'two' });
    const t = s.turnStart({ context_message_ids: [m1.id] });
    const a = s.action({ turn_id: t.turn_id, tool: 'Read' });
    s.end();
    const got = (await attributionsOf(s)).get(a.id)!;
    expect(got.basis).toBe('recorded_context');
    expect(got.message_ids).toEqual([m1.id]);
    expect(got.confidence).toBe(1);
    expect(got.candidates).toBeUndefined();
  });

  it('recorded_empty_context: the turn recorded context_message_ids []', async () => {
    const s = writer('bot');
    s.message({ user_id: 'priya', text: 'said, but not to this turn' });
    const t = s.turnStart({ context_message_ids: [] });
    const a = s.action({ turn_id: t.turn_id, tool: 'Read' });
    s.end();
    const got = (await attributionsOf(s)).get(a.id)!;
    expect(got.basis).toBe('recorded_empty_context');
    expect(got.message_ids).toEqual([]);
    expect(got.confidence).toBe(1);
  });

  it('caused_by wins over the turn context', async () => {
    const s = writer('bot');
    const m1 = s.message({ user_id: 'priya', text: 'one' });
    const m2 = s.message({ user_id: 'priya', text: 'two' });
    const t = s.turnStart({ context_message_ids: [m1.id] });
    const a = s.action({ turn_id: t.turn_id, tool: 'Read', caused_by: [m2.id] });
    const b = s.action({ turn_id: t.turn_id, tool: 'Read', caused_by: [] });
    s.end();
    const got = await attributionsOf(s);
    expect(got.get(a.id)).toMatchObject({ basis: 'recorded', message_ids: [m2.id] });
    expect(got.get(b.id)).toMatchObject({ basis: 'recorded_no_cause', message_ids: [] });
  });
});

describe('inference', () => {
  it("temporal: one person's two messages (from their own terminal) since the previous turn", async () => {
    const bot = writer('bot');
    const priya = writer(null, bot);
    const m0 = priya.message({ user_id: 'priya', text: 'before the first turn' });
    const t1 = bot.turnStart();
    const a1 = bot.action({ turn_id: t1.turn_id, tool: 'Read' });
    const m1 = priya.message({ user_id: 'priya', text: 'restart the payments worker' });
    const m2 = priya.message({ user_id: 'priya', text: 'the EU one' });
    const t2 = bot.turnStart();
    const a2 = bot.action({ turn_id: t2.turn_id, tool: 'Bash' });
    bot.end();
    priya.end();
    const got = await attributionsOf(bot);
    expect(got.get(a1.id)).toMatchObject({ basis: 'temporal', message_ids: [m0.id], confidence: 0.7 });
    expect(got.get(a2.id)).toEqual({
      event_id: a2.id,
      type: 'agent.action',
      turn_id: t2.turn_id,
      message_ids: [m1.id, m2.id],
      basis: 'temporal',
      confidence: TEMPORAL_CONFIDENCE,
    });
  });

  it("contested: two people's messages in the window, confidence shared", async () => {
    const bot = writer('bot');
    const priya = writer(null, bot);
    const sam = writer(null, bot);
    const m1 = priya.message({ user_id: 'priya', text: 'restart the payments worker' });
    const m2 = sam.message({ user_id: 'sam', text: 'no, roll it back' });
    const m3 = priya.message({ user_id: 'priya', text: 'please' });
    const t = bot.turnStart();
    const a = bot.action({ turn_id: t.turn_id, tool: 'Bash' });
    for (const w of [bot, priya, sam]) w.end();
    const got = (await attributionsOf(bot)).get(a.id)!;
    const share = CONTESTED_TOTAL_CONFIDENCE / 2;
    expect(got.basis).toBe('contested');
    expect(got.message_ids).toEqual([m1.id, m2.id, m3.id]);
    expect(got.confidence).toBeCloseTo(share, 6);
    expect(got.candidates).toEqual([
      { user_id: 'priya', message_ids: [m1.id, m3.id], confidence: share },
      { user_id: 'sam', message_ids: [m2.id], confidence: share },
    ]);
  });

  it('contested among three: 0.7 / 3 each', async () => {
    const s = writer('bot');
    for (const u of ['a', 'b', 'c']) s.message({ user_id: u, text: u });
    const t = s.turnStart();
    const o = s.output({ turn_id: t.turn_id, text: 'which of you?' });
    s.end();
    const got = (await attributionsOf(s)).get(o.id)!;
    expect(got.basis).toBe('contested');
    expect(got.candidates?.map((c) => c.user_id)).toEqual(['a', 'b', 'c']);
    for (const c of got.candidates!) expect(c.confidence).toBeCloseTo(0.7 / 3, 6);
  });

  it('none: no message since the previous turn', async () => {
    const s = writer('bot');
    s.message({ user_id: 'priya', text: 'go' });
    const t1 = s.turnStart();
    s.turnEnd({ turn_id: t1.turn_id, status: 'completed' });
    const t2 = s.turnStart();
    const a = s.action({ turn_id: t2.turn_id, tool: 'Read' });
    s.end();
    expect((await attributionsOf(s)).get(a.id)).toEqual({
      event_id: a.id,
      type: 'agent.action',
      turn_id: t2.turn_id,
      message_ids: [],
      basis: 'none',
      confidence: 0,
    });
  });

  it('cascade: an action after an earlier action’s result in the same turn inherits × 0.8', async () => {
    const s = writer('bot');
    const m = s.message({ user_id: 'priya', text: 'fix the build' });
    const t = s.turnStart();
    const a1 = s.action({ turn_id: t.turn_id, tool: 'Bash', caused_by: [m.id] });
    s.actionResult({ action_id: a1.id, status: 'error', error: 'tests fail' });
    const a2 = s.action({ turn_id: t.turn_id, tool: 'Edit' });
    s.actionResult({ action_id: a2.id, status: 'ok' });
    const a3 = s.action({ turn_id: t.turn_id, tool: 'Bash' });
    s.end();
    const got = await attributionsOf(s);
    expect(got.get(a1.id)).toMatchObject({ basis: 'recorded', confidence: 1 });
    expect(got.get(a2.id)).toEqual({
      event_id: a2.id,
      type: 'agent.action',
      turn_id: t.turn_id,
      message_ids: [m.id],
      basis: 'cascade',
      confidence: CASCADE_DECAY,
      cascade_from: a1.id,
    });
    expect(got.get(a3.id)).toMatchObject({
      basis: 'cascade',
      message_ids: [m.id],
      confidence: 0.64,
      cascade_from: a2.id,
    });
  });

  it('cascade from a temporal action: 0.7 × 0.8; a contested one carries its candidates', async () => {
    const s = writer('bot');
    const m1 = s.message({ user_id: 'priya', text: 'go' });
    const t1 = s.turnStart();
    const a1 = s.action({ turn_id: t1.turn_id, tool: 'Bash' });
    s.actionResult({ action_id: a1.id, status: 'ok' });
    const a2 = s.action({ turn_id: t1.turn_id, tool: 'Bash' });
    const m2 = s.message({ user_id: 'priya', text: 'a' });
    const m3 = s.message({ user_id: 'sam', text: 'b' });
    const t2 = s.turnStart();
    const b1 = s.action({ turn_id: t2.turn_id, tool: 'Bash' });
    s.actionResult({ action_id: b1.id, status: 'ok' });
    const b2 = s.action({ turn_id: t2.turn_id, tool: 'Bash' });
    s.end();
    const got = await attributionsOf(s);
    expect(got.get(a2.id)).toMatchObject({ basis: 'cascade', message_ids: [m1.id], confidence: 0.56 });
    expect(got.get(b1.id)).toMatchObject({ basis: 'contested', confidence: 0.35 });
    expect(got.get(b2.id)).toMatchObject({
      basis: 'cascade',
      message_ids: [m2.id, m3.id],
      confidence: 0.28,
      cascade_from: b1.id,
      candidates: [
        { user_id: 'priya', message_ids: [m2.id], confidence: 0.28 },
        { user_id: 'sam', message_ids: [m3.id], confidence: 0.28 },
      ],
    });
  });

  it('no cascade when a message came after the earlier action, nor across turns, nor for outputs', async () => {
    const bot = writer('bot');
    const priya = writer(null, bot);
    const m1 = priya.message({ user_id: 'priya', text: 'fix the build' });
    const t1 = bot.turnStart();
    const a1 = bot.action({ turn_id: t1.turn_id, tool: 'Bash', caused_by: [m1.id] });
    priya.message({ user_id: 'priya', text: 'while it runs: also the docs' });
    bot.actionResult({ action_id: a1.id, status: 'ok' });
    const a2 = bot.action({ turn_id: t1.turn_id, tool: 'Edit' });
    const a3 = bot.action({ turn_id: t1.turn_id, tool: 'Bash', caused_by: [m1.id] });
    bot.actionResult({ action_id: a3.id, status: 'ok' });
    const o = bot.output({ turn_id: t1.turn_id, text: 'done' });
    const t2 = bot.turnStart();
    const b1 = bot.action({ turn_id: t2.turn_id, tool: 'Read' });
    bot.end();
    priya.end();
    const got = await attributionsOf(bot);
    // The window of t1 ends at its turn.start: only m1.
    expect(got.get(a2.id)).toMatchObject({ basis: 'temporal', message_ids: [m1.id], confidence: 0.7 });
    expect(got.get(o.id)).toMatchObject({ type: 'agent.output', basis: 'temporal', message_ids: [m1.id] });
    // a3's result is in t1: t2's first action does not inherit it; the message sent during t1 is in t2's window.
    expect(got.get(b1.id)).toMatchObject({ basis: 'temporal', confidence: 0.7 });
    expect(got.get(b1.id)!.message_ids).toHaveLength(1);
    expect(got.get(b1.id)!.message_ids).not.toContain(m1.id);
  });

  it('an action whose turn_id names no turn: window from the writer’s last turn.start to the event', async () => {
    const s = writer('bot');
    const m0 = s.message({ user_id: 'priya', text: 'old' });
    s.turnStart();
    const m1 = s.message({ user_id: 'priya', text: 'new' });
    const a = s.action({ turn_id: 't_01KZVVGRNT05FRT0FDW3NQZ7Q6', tool: 'Read' });
    const m2 = s.message({ user_id: 'priya', text: 'after' });
    s.end();
    const got = (await attributionsOf(s)).get(a.id)!;
    expect(got).toMatchObject({
      basis: 'temporal',
      turn_id: 't_01KZVVGRNT05FRT0FDW3NQZ7Q6',
      message_ids: [m1.id],
      confidence: 0.7,
    });
    expect(got.message_ids).not.toContain(m0.id);
    expect(got.message_ids).not.toContain(m2.id);
  });

  it('an action with no turn at all in a session without messages: none', async () => {
    const s = writer('bot');
    const a = s.action({ turn_id: '', tool: 'Read' });
    s.end();
    expect((await attributionsOf(s)).get(a.id)).toMatchObject({
      turn_id: null,
      basis: 'none',
      message_ids: [],
      confidence: 0,
    });
  });

  it('an output: recorded, or inferred like an action', async () => {
    const s = writer('bot');
    const m = s.message({ user_id: 'priya', text: 'status?' });
    const t = s.turnStart();
    const o1 = s.output({ turn_id: t.turn_id, text: 'all green', caused_by: [m.id] });
    const o2 = s.output({ turn_id: t.turn_id, text: 'anything else?' });
    s.end();
    const got = await attributionsOf(s);
    expect(got.get(o1.id)).toEqual({
      event_id: o1.id,
      type: 'agent.output',
      turn_id: t.turn_id,
      message_ids: [m.id],
      basis: 'recorded',
      confidence: 1,
    });
    expect(got.get(o2.id)).toMatchObject({ type: 'agent.output', basis: 'temporal', message_ids: [m.id] });
  });

  it('two agents running turns concurrently: each window runs from its own writer’s previous turn', async () => {
    const alpha = writer('alpha');
    const beta = writer('beta', alpha);
    const priya = writer(null, alpha);
    const m1 = priya.message({ user_id: 'priya', text: 'alpha, deploy' });
    const ta1 = alpha.turnStart();
    const aa1 = alpha.action({ turn_id: ta1.turn_id, tool: 'Bash' });
    const m2 = priya.message({ user_id: 'priya', text: 'beta, review' });
    const tb1 = beta.turnStart();
    const ab1 = beta.action({ turn_id: tb1.turn_id, tool: 'Read' });
    const m3 = priya.message({ user_id: 'priya', text: 'both: stop' });
    const ta2 = alpha.turnStart();
    const aa2 = alpha.action({ turn_id: ta2.turn_id, tool: 'Bash' });
    const tb2 = beta.turnStart();
    const ab2 = beta.action({ turn_id: tb2.turn_id, tool: 'Read' });
    for (const w of [alpha, beta, priya]) w.end();
    const got = await attributionsOf(alpha);
    expect(got.get(aa1.id)!.message_ids).toEqual([m1.id]);
    // beta's first turn: everything since the session began, though alpha's turn started in between.
    expect(got.get(ab1.id)!.message_ids).toEqual([m1.id, m2.id]);
    // alpha's second turn: since alpha's first turn.start (beta's turn does not close alpha's window).
    expect(got.get(aa2.id)!.message_ids).toEqual([m2.id, m3.id]);
    expect(got.get(ab2.id)!.message_ids).toEqual([m3.id]);
    for (const id of [aa1.id, ab1.id, aa2.id, ab2.id]) expect(got.get(id)!.basis).toBe('temporal');
  });
});

describe('what is attributed', () => {
  it('only agent.action and agent.output, in merged order', async () => {
    const s = writer('bot');
    s.participantJoin({ user_id: 'priya', display_name: 'Priya' });
    const m = s.message({ user_id: 'priya', text: 'restart the payments worker' });
    const t = s.turnStart({ context_message_ids: [m.id] });
    const a = s.action({ turn_id: t.turn_id, tool: 'Bash', caused_by: [m.id] });
    s.actionResult({ action_id: a.id, status: 'ok', output: 'restarted' });
    const o = s.output({ turn_id: t.turn_id, text: 'done', caused_by: [m.id] });
    s.turnEnd({ turn_id: t.turn_id, status: 'completed' });
    s.note({ author: 'priya', text: 'thanks' });
    s.correct({ target_id: t.turn_id, field: 'status', value: 'failed', reason: 'it raised' });
    s.participantLeave({ user_id: 'priya' });
    s.end();
    const events = await readBack(s);
    expect(events).toHaveLength(12);
    const got = attribute(events);
    expect(got.map((x) => [x.event_id, x.type])).toEqual([
      [a.id, 'agent.action'],
      [o.id, 'agent.output'],
    ]);
  });

  it('the streaming forms agree with attribute(), and take recorded or merged events as they come', async () => {
    const bot = writer('bot');
    const priya = writer(null, bot);
    const sam = writer(null, bot);
    priya.message({ user_id: 'priya', text: 'a' });
    sam.message({ user_id: 'sam', text: 'b' });
    const t = bot.turnStart();
    const a1 = bot.action({ turn_id: t.turn_id, tool: 'Bash' });
    bot.actionResult({ action_id: a1.id, status: 'ok' });
    bot.action({ turn_id: t.turn_id, tool: 'Bash' });
    bot.output({ turn_id: t.turn_id, text: 'ok', caused_by: [] });
    for (const w of [bot, priya, sam]) w.end();
    const batch = attribute(await readBack(bot));
    expect(batch.map((x) => x.basis)).toEqual(['contested', 'cascade', 'recorded_no_cause']);
    const streamed: Attribution[] = [];
    for await (const x of attributeStream(mergeSegments(sessionDirSources(bot.dir)))) streamed.push(x);
    expect(streamed).toEqual(batch);
    const recorded = [];
    for await (const m of mergeSegments(sessionDirSources(bot.dir))) recorded.push(m.event);
    expect(attribute(recorded)).toEqual(batch);
    const at = new Attributor();
    expect(recorded.map((e) => at.push(e)).filter((x) => x !== null)).toEqual(batch);
  });
});

describe('odd input', () => {
  const env = (seq: number, id: string, type: string) => ({
    v: 3,
    sid: 's_01KZVVGRNR3D5V708Z4NPGG11H',
    w: 'w_01KZVVGRNRKM87Z6X6TXYQR7EX',
    seq,
    id,
    ts: '2026-08-12T20:44:44.000000Z',
    mono: seq,
    type,
  });

  it('never throws, skips what is not an event, reads undecodable fields leniently', () => {
    const got = attribute([
      null as never,
      42 as never,
      {} as never,
      { type: 7 } as never,
      { ...env(1, 'm_1', 'message'), user_id: 'priya', text: 'hi' },
      // A turn.start whose context is not a list of strings: counts as not recorded.
      { ...env(2, 't_1', 'turn.start'), turn_id: 't_1', context_message_ids: 'm_1' },
      // caused_by of the wrong type: the event does not decode, is read from extra, caused_by as null.
      { ...env(3, 'a_1', 'agent.action'), turn_id: 't_1', tool: 'Bash', caused_by: [1, 2] },
      { ...env(4, 'e_1', 'agent.action_result'), action_id: 'a_unknown', status: 'ok' },
      { ...env(5, 'a_2', 'agent.action'), turn_id: 't_1', tool: 'Bash', caused_by: ['m_x', 'm_x'] },
      { ...env(6, 'e_2', 'agent.output') },
    ]);
    expect(got).toEqual([
      {
        event_id: 'a_1',
        type: 'agent.action',
        turn_id: 't_1',
        message_ids: ['m_1'],
        basis: 'temporal',
        confidence: 0.7,
      },
      {
        event_id: 'a_2',
        type: 'agent.action',
        turn_id: 't_1',
        message_ids: ['m_x'],
        basis: 'recorded',
        confidence: 1,
      },
      { event_id: 'e_2', type: 'agent.output', turn_id: null, message_ids: [], basis: 'none', confidence: 0 },
    ]);
  });
});
