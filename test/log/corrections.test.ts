import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  applyCorrections,
  type CorrectionProblem,
  decodeEvent,
  effectiveLine,
  FIELD_ORDER,
  type KnownType,
  type LogEvent,
  listSegments,
  mergeSegments,
  newId,
  newSessionId,
  openSession,
  type ReplayFormat,
  type ReplaySegment,
  replayLines,
  replayRaw,
  type SessionWriter,
  serializeEvent,
  sessionDirSegments,
  sessionDirSources,
  TYPE_FIELDS,
} from '../../lib/log/index.js';

const T0 = 1_900_000_000_000_000; // µs; 2030, later than any real writer.start
const SECOND = 1_000_000;

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'hansard-corrections-'));
});
afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** A clock that starts at `start` and moves by `step` µs per reading (the writer reads it once per event). */
function steppingClock(start: number, step = 1000): () => number {
  let now = start - step;
  return () => {
    now += step;
    return now;
  };
}

function writer(sid: string, agent: string, clock: () => number): SessionWriter {
  return openSession(tmp, { sid, agent, host: 'demo-host', pid: 1 }, { clock, monoClock: () => 0 });
}

async function replay(
  dir: string,
  format: ReplayFormat = 'ndjson',
  segments: readonly ReplaySegment[] = sessionDirSegments(dir),
): Promise<{ lines: string[]; problems: CorrectionProblem[] }> {
  const problems: CorrectionProblem[] = [];
  let out = '';
  for await (const l of replayLines(segments, format, { onCorrectionProblem: (p) => problems.push(p) })) {
    expect(l.endsWith('\n')).toBe(true);
    out += l;
  }
  const lines = out.split('\n');
  expect(lines.pop()).toBe('');
  return { lines, problems };
}

async function raw(dir: string): Promise<string> {
  const parts: Buffer[] = [];
  for await (const b of replayRaw(sessionDirSegments(dir))) parts.push(Buffer.from(b));
  return Buffer.concat(parts).toString('utf8');
}

/** Every line of every segment of a session directory, as written. */
function writtenLines(dir: string): string[] {
  return listSegments(dir).flatMap((s) => readFileSync(s.path, 'utf8').split('\n').filter(Boolean));
}

function lineOf(lines: string[], id: string): string {
  const found = lines.filter((l) => (JSON.parse(l) as { id: string }).id === id);
  expect(found).toHaveLength(1);
  return found[0]!;
}

/** The merged events of a directory, decoded, through the merge alone (no corrections). */
async function mergedEvents(dir: string): Promise<LogEvent[]> {
  const out: LogEvent[] = [];
  for await (const m of mergeSegments(sessionDirSources(dir))) out.push(decodeEvent(m.event));
  return out;
}

/** A turn by writer `a`: start and end (completed). */
function turn(a: SessionWriter) {
  const m = a.message({ user_id: 'priya', text: 'restart the payments worker' });
  const t = a.turnStart({ context_message_ids: [m.id] });
  const act = a.action({ turn_id: t.turn_id, tool: 'Bash', input: { command: 'ls' }, caused_by: null });
  const out = a.output({ turn_id: t.turn_id, text: 'done', caused_by: [m.id] });
  const end = a.turnEnd({ turn_id: t.turn_id, status: 'completed' });
  return { m, t, act, out, end };
}

describe('a corrected turn.end status', () => {
  it('replays with the new status and its provenance; uncorrected lines keep their bytes', async () => {
    const sid = newSessionId();
    const a = writer(sid, 'agent', steppingClock(T0));
    const b = writer(sid, 'human', steppingClock(T0 + SECOND));
    const { end } = turn(a);
    a.end();
    const c = b.correct({
      target_id: end.id,
      field: 'status',
      value: 'failed',
      reason: 'the turn raised after end()',
    });
    b.end();
    const dir = a.dir;
    const { lines, problems } = await replay(dir);
    expect(problems).toEqual([]);
    const corrected = JSON.parse(lineOf(lines, end.id)) as Record<string, unknown>;
    expect(corrected.status).toBe('failed');
    expect(corrected.corrected).toEqual([
      { by: c.id, field: 'status', was: 'completed', reason: 'the turn raised after end()' },
    ]);
    expect(Object.keys(corrected).at(-1)).toBe('corrected');
    // exactly serializeEvent of the effective event, then the provenance
    expect(lineOf(lines, end.id)).toBe(
      `${serializeEvent({ ...end, status: 'failed' }).slice(0, -1)},"corrected":${JSON.stringify(corrected.corrected)}}`,
    );
    // every other line as written, the correction event included
    const written = writtenLines(dir);
    const others = lines.filter((l) => !l.includes(`"id":"${end.id}"`));
    expect(others).toHaveLength(written.length - 1);
    for (const l of others) expect(written).toContain(l);
    expect(others).toContain(serializeEvent(c));
  });

  it('raw replay gives the original bytes, no provenance', async () => {
    const sid = newSessionId();
    const a = writer(sid, 'agent', steppingClock(T0));
    const b = writer(sid, 'human', steppingClock(T0 + SECOND));
    const { end } = turn(a);
    b.correct({ target_id: end.id, field: 'status', value: 'failed', reason: 'raised' });
    a.end();
    b.end();
    const text = await raw(a.dir);
    expect(text).not.toContain('"corrected"');
    expect(text).toContain(`${serializeEvent(end)}\n`);
    expect(text.split('\n').filter(Boolean).sort()).toEqual(writtenLines(a.dir).sort());
  });

  it('text replay shows the effective status and marks the event', async () => {
    const sid = newSessionId();
    const a = writer(sid, 'agent', steppingClock(T0));
    const b = writer(sid, 'human', steppingClock(T0 + SECOND));
    const { end } = turn(a);
    const c = b.correct({ target_id: end.id, field: 'status', value: 'failed', reason: 'raised' });
    a.end();
    b.end();
    const { lines } = await replay(a.dir, 'text');
    const ends = lines.filter((l) => / turn\.end +/.test(l));
    expect(ends).toHaveLength(1);
    expect(ends[0]).toContain('ends: failed');
    expect(ends[0]!.endsWith(` [corrected: status by ${c.id} (raised)]`)).toBe(true);
    expect(lines.filter((l) => l.includes('[corrected:'))).toHaveLength(1);
  });
});

describe('several corrections of one field', () => {
  it('the last in merged order wins, and all are in the provenance in merged order with what each replaced', async () => {
    const sid = newSessionId();
    const a = writer(sid, 'agent', steppingClock(T0));
    const b = writer(sid, 'alice', steppingClock(T0 + 20 * SECOND));
    const c = writer(sid, 'bob', steppingClock(T0 + 10 * SECOND));
    const { end } = turn(a);
    a.end();
    // b writes first, but c's correction is earlier in merged order (its ts is earlier)
    const late = b.correct({
      target_id: end.id,
      field: 'status',
      value: 'interrupted',
      reason: 'second look',
    });
    const early = c.correct({ target_id: end.id, field: 'status', value: 'failed', reason: 'first look' });
    b.end();
    c.end();
    const { lines, problems } = await replay(a.dir);
    expect(problems).toEqual([]);
    const ev = JSON.parse(lineOf(lines, end.id)) as Record<string, unknown>;
    expect(ev.status).toBe('interrupted');
    expect(ev.corrected).toEqual([
      { by: early.id, field: 'status', was: 'completed', reason: 'first look' },
      { by: late.id, field: 'status', was: 'failed', reason: 'second look' },
    ]);
    // the in-memory view agrees
    const { events } = applyCorrections(await mergedEvents(a.dir));
    const eff = events.find((e) => e.id === end.id)!;
    expect(effectiveLine(eff)).toBe(lineOf(lines, end.id));
  });

  it('with equal merge keys, the writer id decides, as in the merge', async () => {
    const sid = newSessionId();
    const a = writer(sid, 'agent', steppingClock(T0));
    const w1 = writer(sid, 'one', () => T0 + 5 * SECOND);
    const w2 = writer(sid, 'two', () => T0 + 5 * SECOND);
    const { end } = turn(a);
    const [first, second] = w1.w < w2.w ? [w2, w1] : [w1, w2]; // write the later writer id's first
    const x = first.correct({ target_id: end.id, field: 'status', value: 'failed', reason: 'x' });
    const y = second.correct({ target_id: end.id, field: 'status', value: 'cancelled', reason: 'y' });
    const { lines } = await replay(a.dir);
    const ev = JSON.parse(lineOf(lines, end.id)) as { status: string; corrected: { by: string }[] };
    expect(ev.corrected.map((m) => m.by)).toEqual([y.id, x.id]);
    expect(ev.status).toBe('failed');
  });
});

describe('corrections that change nothing', () => {
  it('of an envelope field, the type, an extra field or truncated: correction_forbidden_field', async () => {
    const sid = newSessionId();
    const a = writer(sid, 'agent', steppingClock(T0));
    const b = writer(sid, 'human', steppingClock(T0 + SECOND));
    const { end } = turn(a);
    a.end();
    // a line from another writer with a field its type does not define (kept in `extra`)
    const w = newId('w');
    const withExtra = {
      ...decodeEvent(JSON.parse(serializeEvent(end)) as Record<string, unknown>),
      w,
      seq: 1,
      id: newId('e'),
      extra: { ticket: 'OPS-1' },
    } as LogEvent;
    appendFileSync(join(a.dir, `${w}.jsonl`), `${serializeEvent(withExtra)}\n`);
    const fields: [string, string, unknown][] = [
      [end.id, 'ts', '2020-01-01T00:00:00.000000Z'],
      [end.id, 'type', 'note'],
      [end.id, 'id', 'e_01KZVVGRNT05FRT0FDW3NQZ7Q6'],
      [end.id, 'mono', 0],
      [end.id, 'ticket', 'OPS-2'],
      [end.id, 'truncated', []],
      [withExtra.id, 'ticket', 'OPS-2'],
    ];
    const corrections = fields.map(([target_id, field, value]) =>
      b.correct({ target_id, field, value, reason: `fix ${field}` }),
    );
    b.end();
    const { lines, problems } = await replay(a.dir);
    expect(lineOf(lines, end.id)).toBe(serializeEvent(end));
    expect(lineOf(lines, withExtra.id)).toBe(serializeEvent(withExtra));
    expect(lines.some((l) => l.includes('"corrected"'))).toBe(false);
    expect(problems.map((p) => [p.code, p.w, p.seq])).toEqual(
      corrections.map((c) => ['correction_forbidden_field', b.w, c.seq]),
    );
    expect(problems.every((p) => p.severity === 'warning' && p.message.length > 0)).toBe(true);
    expect(applyCorrections(await mergedEvents(a.dir)).problems).toEqual(problems);
  });

  it('of any field of an unknown-type event: correction_forbidden_field', async () => {
    const sid = newSessionId();
    const a = writer(sid, 'agent', steppingClock(T0));
    const b = writer(sid, 'human', steppingClock(T0 + SECOND));
    a.end();
    const w = newId('w');
    const unknown = {
      v: 3,
      sid,
      w,
      seq: 1,
      id: newId('e'),
      ts: '2030-03-17T17:46:41.000000Z',
      mono: 0,
      type: 'agent.thought',
      text: 'hm',
    };
    appendFileSync(join(a.dir, `${w}.jsonl`), `${JSON.stringify(unknown)}\n`);
    b.correct({ target_id: unknown.id, field: 'text', value: 'hmm', reason: 'typo' });
    b.end();
    const { lines, problems } = await replay(a.dir);
    expect(lineOf(lines, unknown.id)).toBe(JSON.stringify(unknown));
    expect(problems.map((p) => p.code)).toEqual(['correction_forbidden_field']);
  });

  it('of a target not in the session: correction_target_missing', async () => {
    const sid = newSessionId();
    const a = writer(sid, 'agent', steppingClock(T0));
    turn(a);
    const c = a.correct({ target_id: newId('e'), field: 'status', value: 'failed', reason: 'gone' });
    a.end();
    const { lines, problems } = await replay(a.dir);
    expect(lines).toEqual(writtenLines(a.dir));
    expect(problems).toEqual([
      {
        severity: 'warning',
        code: 'correction_target_missing',
        w: a.w,
        seq: c.seq,
        message: expect.any(String),
      },
    ]);
    expect(applyCorrections(await mergedEvents(a.dir)).problems).toEqual(problems);
  });

  it('with a value the field cannot hold: correction_invalid_value', async () => {
    const sid = newSessionId();
    const a = writer(sid, 'agent', steppingClock(T0));
    const { end, act } = turn(a);
    a.correct({ target_id: end.id, field: 'status', value: 5, reason: 'bad' });
    a.correct({ target_id: act.id, field: 'caused_by', value: 'm_x', reason: 'not a list' });
    a.end();
    const { lines, problems } = await replay(a.dir);
    expect(lines).toEqual(writtenLines(a.dir));
    expect(problems.map((p) => p.code)).toEqual(['correction_invalid_value', 'correction_invalid_value']);
  });
});

describe('a correction before its target in merged order', () => {
  it('still applies (the writer of the correction has an earlier clock)', async () => {
    const sid = newSessionId();
    const a = writer(sid, 'agent', steppingClock(T0 + 60 * SECOND));
    const b = writer(sid, 'human', steppingClock(T0));
    const { end } = turn(a);
    a.end();
    const c = b.correct({ target_id: end.id, field: 'status', value: 'failed', reason: 'early' });
    b.end();
    const { lines, problems } = await replay(a.dir);
    expect(problems).toEqual([]);
    const ids = lines.map((l) => (JSON.parse(l) as { id: string }).id);
    expect(ids.indexOf(c.id)).toBeLessThan(ids.indexOf(end.id));
    const ev = JSON.parse(lineOf(lines, end.id)) as Record<string, unknown>;
    expect(ev.status).toBe('failed');
    expect(ev.corrected).toEqual([{ by: c.id, field: 'status', was: 'completed', reason: 'early' }]);
  });
});

describe('null and [] in corrections', () => {
  it('stay distinct: caused_by null → [] and [m] → null', async () => {
    const sid = newSessionId();
    const a = writer(sid, 'agent', steppingClock(T0));
    const { act, out, m } = turn(a);
    const c1 = a.correct({ target_id: act.id, field: 'caused_by', value: [], reason: 'nothing caused it' });
    const c2 = a.correct({ target_id: out.id, field: 'caused_by', value: null, reason: 'unknown after all' });
    a.end();
    const { lines, problems } = await replay(a.dir);
    expect(problems).toEqual([]);
    const actLine = lineOf(lines, act.id);
    expect(actLine).toContain('"caused_by":[],');
    expect((JSON.parse(actLine) as Record<string, unknown>).corrected).toEqual([
      { by: c1.id, field: 'caused_by', was: null, reason: 'nothing caused it' },
    ]);
    const outLine = lineOf(lines, out.id);
    expect(outLine).toContain('"caused_by":null,');
    expect((JSON.parse(outLine) as Record<string, unknown>).corrected).toEqual([
      { by: c2.id, field: 'caused_by', was: [m.id], reason: 'unknown after all' },
    ]);
    const text = (await replay(a.dir, 'text')).lines;
    expect(text.find((l) => l.includes(' agent.action '))).toContain('[← nobody: recorded_no_cause]');
    const { events } = applyCorrections(await mergedEvents(a.dir));
    const effAct = events.find((e) => e.id === act.id) as { caused_by: unknown };
    const effOut = events.find((e) => e.id === out.id) as { caused_by: unknown };
    expect(effAct.caused_by).toEqual([]);
    expect(effOut.caused_by).toBeNull();
  });
});

describe('applyCorrections', () => {
  it('returns uncorrected events as they are and does not modify its input', () => {
    const sid = newSessionId();
    const a = writer(sid, 'agent', steppingClock(T0));
    const { end, m } = turn(a);
    const c = a.correct({ target_id: end.id, field: 'status', value: 'failed', reason: 'r' });
    a.end();
    const input: LogEvent[] = [m, end, c];
    const before = JSON.stringify(input);
    const { events, problems } = applyCorrections(input);
    expect(problems).toEqual([]);
    expect(events[0]).toBe(m);
    expect(events[2]).toBe(c);
    expect(events[1]).toMatchObject({ status: 'failed', corrected: [{ by: c.id, field: 'status' }] });
    expect(JSON.stringify(input)).toBe(before);
  });
});

describe('replay inputs', () => {
  it('read-once merge sources give the same lines as reopenable segments', async () => {
    const sid = newSessionId();
    const a = writer(sid, 'agent', steppingClock(T0 + SECOND));
    const b = writer(sid, 'human', steppingClock(T0));
    const { end, t } = turn(a);
    b.correct({ target_id: end.id, field: 'status', value: 'failed', reason: 'r' });
    b.correct({ target_id: t.id, field: 'ts', value: 'x', reason: 'r' });
    a.end();
    b.end();
    for (const format of ['ndjson', 'text'] as const) {
      const viaSegments = await replay(a.dir, format);
      const problems: CorrectionProblem[] = [];
      let out = '';
      for await (const l of replayLines(sessionDirSources(a.dir), format, {
        onCorrectionProblem: (p) => problems.push(p),
      })) {
        out += l;
      }
      expect(out).toBe(viaSegments.lines.map((l) => `${l}\n`).join(''));
      expect(problems).toEqual(viaSegments.problems);
    }
  });
});

// ---- property: streaming replay ≡ in-memory applyCorrections ----

type Step =
  | { kind: 'message' | 'turn' | 'action' | 'end' | 'note'; w: number; dt: number }
  | { kind: 'correct'; w: number; dt: number; target: number; field: number; value: number };

/** Fields no correction may change (or that the target's type does not have). */
const FORBIDDEN = ['ts', 'type', 'id', 'seq', 'mono', 'ticket', 'truncated'];
const VALUES: unknown[] = ['failed', 'x', null, [], ['m_01KZVVGRNTBMSD610TK2GA9BFS'], 5, { a: 1 }, ''];

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constantFrom('message', 'turn', 'action', 'end', 'note') as fc.Arbitrary<
        'message' | 'turn' | 'action' | 'end' | 'note'
      >,
      w: fc.nat(2),
      dt: fc.integer({ min: -2, max: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('correct' as const),
      w: fc.nat(2),
      dt: fc.integer({ min: -2, max: 3 }),
      target: fc.nat(9),
      field: fc.nat(99),
      value: fc.nat(VALUES.length - 1),
    }),
  },
);

/**
 * Writes a random three-writer session; clocks move by whole ms (and sometimes back) so writers often tie
 * and corrections often come before their targets. Corrections pick among few targets (one in ten a missing
 * one), mostly a field of the target's type, else a forbidden one.
 */
function writeSession(root: string, steps: Step[]): string {
  const sid = newSessionId();
  const now = [T0, T0, T0];
  const writers = [0, 1, 2].map((i) =>
    openSession(
      root,
      { sid, agent: `bot${i}`, host: 'h', pid: i },
      { clock: () => now[i]!, monoClock: () => 0 },
    ),
  );
  const written: LogEvent[] = [];
  let turnId = 't_01KZVVGRNT05FRT0FDW3NQZ7Q6';
  for (const s of steps) {
    now[s.w]! += s.dt * 1000;
    const w = writers[s.w]!;
    switch (s.kind) {
      case 'message':
        written.push(w.message({ user_id: 'priya', text: 'hi' }));
        break;
      case 'turn': {
        const t = w.turnStart({ context_message_ids: null });
        turnId = t.turn_id;
        written.push(t);
        break;
      }
      case 'action':
        written.push(w.action({ turn_id: turnId, tool: 'Bash', input: { n: 1 }, caused_by: null }));
        break;
      case 'end':
        written.push(w.turnEnd({ turn_id: turnId, status: 'completed' }));
        break;
      case 'note':
        written.push(w.note({ author: 'bob', text: 'note' }));
        break;
      case 'correct': {
        const target =
          s.target < 9 && written.length > 0 ? written[s.target % Math.min(3, written.length)]! : null;
        const type = target?.type as KnownType | undefined;
        const own = type ? FIELD_ORDER[type] : [];
        const field =
          own.length > 0 && s.field < 70
            ? own[s.field % own.length]!
            : FORBIDDEN[s.field % FORBIDDEN.length]!;
        const schema = type ? (TYPE_FIELDS[type].shape as Record<string, z.ZodType>)[field] : undefined;
        const valid = schema ? VALUES.filter((v) => schema.safeParse(v).success) : [];
        const c = w.correct({
          target_id: target ? target.id : newId('e'),
          field,
          value: valid.length > 0 && s.field % 4 !== 0 ? valid[s.value % valid.length] : VALUES[s.value],
          reason: `r${written.length}`,
        });
        written.push(c);
        break;
      }
    }
  }
  for (const w of writers) w.end();
  return writers[0]!.dir;
}

/** Segments whose streams come in chunks of `size` bytes, whatever pass 1 asks for. */
function chunkedSegments(dir: string, size: number): ReplaySegment[] {
  return listSegments(dir).map(({ w, path }) => {
    const bytes = readFileSync(path);
    return {
      w,
      open: () => {
        const chunks: Uint8Array[] = [];
        for (let i = 0; i < bytes.length; i += size) chunks.push(new Uint8Array(bytes.subarray(i, i + size)));
        return chunks;
      },
    };
  });
}

describe('streaming replay and applyCorrections', () => {
  it('give the same effective view for random corrections on random targets', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 60 }),
        fc.oneof(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 400, max: 1 << 20 })),
        async (steps, chunk) => {
          const root = mkdtempSync(join(tmp, 'p-'));
          const dir = writeSession(root, steps);
          const streamed = await replay(dir, 'ndjson', chunkedSegments(dir, chunk));
          const { events, problems } = applyCorrections(await mergedEvents(dir));
          expect(streamed.lines).toEqual(events.map((e) => effectiveLine(e)));
          expect(streamed.problems).toEqual(problems);
          rmSync(root, { recursive: true, force: true });
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('the text replay of a correction that changed nothing', () => {
  it('marks it not applied, with the code, when its target came first', async () => {
    const sid = newSessionId();
    const a = writer(sid, 'agent', steppingClock(T0));
    const { end } = turn(a);
    a.correct({ target_id: end.id, field: 'status', value: 42, reason: 'oops' });
    a.correct({ target_id: end.id, field: 'status', value: 'failed', reason: 'raised' });
    a.end();
    const { lines } = await replay(a.dir, 'text');
    const corrections = lines.filter((l) => / correction +/.test(l));
    expect(corrections.find((l) => l.includes('(oops)'))).toContain(
      '[not applied: correction_invalid_value]',
    );
    expect(corrections.find((l) => l.includes('(raised)'))).not.toContain('not applied');
  });
});
