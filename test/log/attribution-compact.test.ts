/**
 * The Attributor's compact state (issue 16, peak RSS: ids interned, turns and actions as int32 columns,
 * positions counted in messages, only actions a cascade can still come from kept) attributes every event
 * exactly as the Attributor of before did (test/log/attribution-oracle.ts), on any sequence of events
 * drawn from small pools of ids, so that ids repeat in every role: message ids written again by others or
 * with no user_id, turn ids started twice or named before their turn.start, action ids defined again in
 * another turn, results naming old, redefined, unknown or never-cascadable actions, actions of old turns,
 * recorded causes and contexts valid or not, ids that are ULID-shaped, plain or not well-formed UTF-16.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Attributor } from '../../lib/log/replay/attribution.js';
import { OracleAttributor } from './attribution-oracle.js';

type Ev = { type: string; id: string; w: string; f: Record<string, unknown> };

const ulid = (p: string, n: number) => `${p}_01KZ${String(n).padStart(22, '0')}`;
const pool = (p: string, n: number) => [...Array.from({ length: n }, (_, k) => ulid(p, k)), `${p}-plain`];
const MESSAGES = [...pool('m', 5), '', 'm_\ud800', 'm_\udbff'];
const TURNS = [...pool('t', 2), ''];
const ACTIONS = [...pool('a', 3), ''];
const WRITERS = ['w_1', 'w_2', 'w_3'];
const USERS: unknown[] = ['priya', 'sam', 'zoë', 7, undefined];

const idsOf = (xs: readonly string[]) => fc.array(fc.constantFrom(...xs), { maxLength: 3 });
const recorded = fc.oneof(
  { weight: 4, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constant([]) },
  { weight: 1, arbitrary: idsOf([...MESSAGES, 'x_unknown']) },
  { weight: 1, arbitrary: fc.constant('not a list') },
);

const one: fc.Arbitrary<Ev> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc
      .record({
        w: fc.constantFrom(...WRITERS),
        id: fc.constantFrom(...MESSAGES),
        u: fc.constantFrom(...USERS),
      })
      .map(({ w, id, u }) => ({ type: 'message', id, w, f: u === undefined ? {} : { user_id: u } })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        w: fc.constantFrom(...WRITERS),
        id: fc.constantFrom(...TURNS),
        named: fc.boolean(),
        ctx: recorded,
      })
      .map(({ w, id, named, ctx }) => ({
        type: 'turn.start',
        id,
        w,
        f: { ...(named ? { turn_id: id } : {}), context_message_ids: ctx },
      })),
  },
  {
    weight: 4,
    arbitrary: fc
      .record({
        w: fc.constantFrom(...WRITERS),
        id: fc.constantFrom(...ACTIONS),
        t: fc.constantFrom(...TURNS, 't_never'),
        c: recorded,
      })
      .map(({ w, id, t, c }) => ({ type: 'agent.action', id, w, f: { turn_id: t, caused_by: c } })),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({ w: fc.constantFrom(...WRITERS), a: fc.constantFrom(...ACTIONS, 'a_never') })
      .map(({ w, a }) => ({ type: 'agent.action_result', id: 'e_r', w, f: { action_id: a } })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ w: fc.constantFrom(...WRITERS), t: fc.constantFrom(...TURNS), c: recorded })
      .map(({ w, t, c }) => ({ type: 'agent.output', id: 'e_o', w, f: { turn_id: t, caused_by: c } })),
  },
  { weight: 1, arbitrary: fc.constant({ type: 'turn.end', id: 'e_x', w: 'w_1', f: { turn_id: TURNS[0] } }) },
);

/** An event, or a burst of one turn (action, its result, the next action: a cascade when nothing came between). */
const event: fc.Arbitrary<Ev[]> = fc.oneof(
  { weight: 5, arbitrary: one.map((e) => [e]) },
  {
    weight: 1,
    arbitrary: fc
      .record({
        w: fc.constantFrom(...WRITERS),
        a: fc.constantFrom(...ACTIONS),
        b: fc.constantFrom(...ACTIONS),
        t: fc.constantFrom(...TURNS),
        c: recorded,
      })
      .map(({ w, a, b, t, c }) => [
        { type: 'agent.action', id: a, w, f: { turn_id: t, caused_by: c } },
        { type: 'agent.action_result', id: 'e_r', w, f: { action_id: a } },
        { type: 'agent.action', id: b, w, f: { turn_id: t, caused_by: null } },
      ]),
  },
);
const events = (maxLength: number) =>
  fc.array(event, { minLength: 5, maxLength, size: 'max' }).map((xs) => xs.flat());

function both(events: readonly Ev[], options: ConstructorParameters<typeof Attributor>[0] = {}) {
  const oracle = new OracleAttributor();
  const compact = new Attributor(options);
  return events.map((e) => [
    compact.pushFields(e.type, e.id, e.w, e.f),
    oracle.pushFields(e.type, e.id, e.w, e.f),
  ]);
}

describe('the compact Attributor', () => {
  it('attributes any sequence of events as the Attributor of before', () => {
    fc.assert(
      fc.property(events(100), (events) => {
        for (const [got, want] of both(events)) expect(got).toEqual(want);
        for (const [got, want] of both(events, { shareWindows: true, keptWindowIds: 3 }))
          expect(got).toEqual(want);
      }),
      { numRuns: 400 },
    );
  });

  it('and so does push, from whole events', () => {
    fc.assert(
      fc.property(events(60), (events) => {
        const oracle = new OracleAttributor();
        const compact = new Attributor();
        for (const e of events) {
          const whole = { ...e.f, type: e.type, id: e.id, w: e.w, extra: {} };
          expect(compact.push(whole)).toEqual(oracle.push(whole));
        }
      }),
      { numRuns: 100 },
    );
  });

  it('makes the windows of turns whose messages are long past (ids decoded again) as before', () => {
    // More messages than the Attributor keeps as strings (4,096), turns of two writers among them, then
    // every turn's actions again, windows not kept: each window is made from the interned ids.
    const events: Ev[] = [];
    const turns: string[] = [];
    for (let k = 0; k < 12_000; k++) {
      events.push({ type: 'message', id: ulid('m', k % 9000), w: 'w_p', f: { user_id: `u${k % 3}` } });
      if (k % 997 === 0) {
        const t = ulid('t', k);
        turns.push(t);
        events.push({ type: 'turn.start', id: t, w: k % 2 ? 'w_a' : 'w_b', f: { turn_id: t } });
        events.push({ type: 'agent.action', id: ulid('a', k), w: 'w_a', f: { turn_id: t, caused_by: null } });
      }
    }
    for (const t of turns) events.push({ type: 'agent.output', id: 'e_o', w: 'w_a', f: { turn_id: t } });
    const pairs = both(events, { keptWindowIds: 0 });
    const outputs = pairs.filter(([got]) => got?.type === 'agent.output');
    expect(outputs.length).toBe(turns.length);
    expect(outputs.some(([got]) => got!.basis === 'contested' && got!.message_ids.length > 1000)).toBe(true);
    for (const [got, want] of pairs) expect(got).toEqual(want);
  });
});
