import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VERIFY_CODE_INFO } from '../../lib/log/analyse/verify-codes.js';
import {
  newId,
  openSession,
  sessionDirSegments,
  sessionDirSources,
  VERIFY_CODES,
  type VerifyCode,
  verifySegments,
  verifySession,
} from '../../lib/log/index.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hansard-verify-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const SID = 's_01KZVVGRNR3D5V708Z4NPGG11H';
const W = 'w_01KZVVGRNRKM87Z6X6TXYQR7EX';
const W2 = 'w_01KZVVGRNRKM87Z6X6TXYQR7EY';

type Obj = Record<string, unknown>;

/** An event line with a full envelope; `over` replaces or adds fields. */
function ev(seq: number, type: string, fields: Obj = {}, over: Obj = {}): Obj {
  const id =
    type === 'writer.start'
      ? W
      : type === 'message'
        ? newId('m')
        : type === 'agent.action'
          ? newId('a')
          : newId('e');
  const ts = `2026-08-12T20:44:${String(10 + seq).padStart(2, '0')}.000000Z`;
  return { v: 3, sid: SID, w: W, seq, id, ts, mono: seq / 1000, type, ...fields, ...over };
}

const start = (over: Obj = {}) =>
  ev(1, 'writer.start', { writer_id: W, meta: { agent: 'bot' }, redacted: [] }, over);
const end = (seq: number, over: Obj = {}) => ev(seq, 'writer.end', { reason: null }, over);

/** Writes a session directory with one segment per writer, lines given as objects or raw strings. */
function session(segments: Record<string, Array<Obj | string>>): string {
  const dir = join(root, SID);
  mkdirSync(dir, { recursive: true });
  for (const [w, lines] of Object.entries(segments)) {
    const text = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n');
    writeFileSync(join(dir, `${w}.jsonl`), text.endsWith('\u0000') ? text : `${text}\n`);
  }
  return dir;
}

async function codes(dir: string): Promise<VerifyCode[]> {
  const r = await verifySession(sessionDirSources(dir), { sid: SID });
  return r.problems.map((p) => p.code);
}

describe('verify', () => {
  it('finds nothing wrong in a session the writer made, except that an open segment is open', async () => {
    const s = openSession(root, { agent: 'bot' });
    const m = s.message({ user_id: 'priya', text: 'hi' });
    const t = s.turnStart({ context_message_ids: [m.id] });
    const a = s.action({ turn_id: t.turn_id, tool: 'Bash', input: { command: 'ls' }, caused_by: [m.id] });
    s.actionResult({ action_id: a.id, status: 'ok', output: 'x', exit_code: 0 });
    s.turnEnd({ turn_id: t.turn_id, status: 'completed' });
    const r1 = await verifySession(sessionDirSources(s.dir));
    expect(r1.ok).toBe(true);
    expect(r1.problems.map((p) => p.code)).toEqual(['segment_open']);
    expect(r1.problems[0]!.severity).toBe('info');
    s.end();
    const r2 = await verifySession(sessionDirSources(s.dir));
    expect(r2).toMatchObject({ ok: true, problems: [], summary: { errors: 0, events: 7, writers: 1 } });
  });

  const cases: Array<[VerifyCode, Record<string, Array<Obj | string>>]> = [
    ['missing_writer_start', { [W]: [ev(1, 'note', { author: 'a', text: 'x', redacted: [] }), end(2)] }],
    ['writer_id_mismatch', { [W]: [start({ writer_id: W2 }), end(2)] }],
    [
      'sid_mismatch',
      {
        [W]: [
          start(),
          ev(2, 'note', { author: 'a', text: 'x' }, { sid: 's_01KZVVGRNR3D5V708Z4NPGG11J' }),
          end(3),
        ],
      },
    ],
    ['seq_gap', { [W]: [start(), ev(3, 'note', { author: 'a', text: 'x' }), end(4)] }],
    [
      'seq_duplicate',
      {
        [W]: [
          start(),
          ev(2, 'note', { author: 'a', text: 'x' }),
          ev(2, 'note', { author: 'a', text: 'y' }),
          end(3),
        ],
      },
    ],
    [
      'mono_backwards',
      { [W]: [start(), ev(2, 'note', { author: 'a', text: 'x' }, { mono: 0.0001 }), end(3)] },
    ],
    [
      'ts_backwards',
      {
        [W]: [
          start(),
          ev(2, 'note', { author: 'a', text: 'x' }, { ts: '2026-08-12T20:40:00.000000Z' }),
          end(3),
        ],
      },
    ],
    [
      'ts_no_timezone',
      {
        [W]: [
          start(),
          ev(2, 'note', { author: 'a', text: 'x' }, { ts: '2026-08-12T20:44:12.000000' }),
          end(3),
        ],
      },
    ],
    [
      'ts_invalid',
      { [W]: [start(), ev(2, 'note', { author: 'a', text: 'x' }, { ts: 'yesterday' }), end(3)] },
    ],
    ['event_after_writer_end', { [W]: [start(), end(2), ev(3, 'note', { author: 'a', text: 'x' })] }],
    ['segment_open', { [W]: [start()] }],
    ['truncated_line', { [W]: [start(), '{"v":3,"sid":"s_01KZVVGRNR3D5V708Z4NPGG11H","w":', end(3)] }],
    ['malformed_line', { [W]: [start(), 'not json at all', end(3)] }],
    ['duplicate_id', { [W]: [start(), ev(2, 'note', { author: 'a', text: 'x' }, { id: W }), end(3)] }],
    [
      'dangling_reference',
      {
        [W]: [
          start(),
          ev(2, 'turn.start', { turn_id: 't_1', context_message_ids: ['m_01KZVVGRNTBMSD610TK2GA9BFS'] }),
          end(3),
        ],
      },
    ],
    ['unknown_version', { [W]: [start(), ev(2, 'note', { author: 'a', text: 'x' }, { v: 4 }), end(3)] }],
    ['invalid_fields', { [W]: [start(), ev(2, 'message', { user_id: 42, text: 'x' }), end(3)] }],
  ];

  it.each(cases)('reports %s on a directory that breaks that rule', async (code, segments) => {
    const found = await codes(session(segments));
    expect(found).toContain(code);
  });

  it('reports causality_skew when an event is caused by one stamped later', async () => {
    const m = ev(3, 'message', { user_id: 'priya', text: 'x', client_ts: null, redacted: [] }, { w: W2 });
    const late: Obj = { ...m, ts: '2026-08-12T20:50:00.000000Z' };
    const dir = session({
      [W]: [
        start(),
        ev(2, 'turn.start', { turn_id: 't_x', context_message_ids: [late.id as string] }),
        end(3),
      ],
      [W2]: [
        { ...start({ writer_id: W2 }), id: W2, w: W2 },
        { ...late, seq: 2 },
        { ...end(3), w: W2 },
      ],
    });
    expect(await codes(dir)).toContain('causality_skew');
  });

  it('tells an unfinished last line (warning) from a torn line in the middle (error), and reads on', async () => {
    const dir = join(root, SID);
    mkdirSync(dir, { recursive: true });
    const lines = [start(), ev(2, 'note', { author: 'a', text: 'x' })]
      .map((l) => JSON.stringify(l))
      .join('\n');
    writeFileSync(join(dir, `${W}.jsonl`), `${lines}\n{"v":3,"sid"`);
    const r = await verifySession(sessionDirSources(dir), { sid: SID });
    const t = r.problems.find((p) => p.code === 'truncated_line')!;
    expect(t.severity).toBe('warning');
    expect(t.line).toBe(3);
    expect(r.summary.events).toBe(2);
  });

  it('reports corrections that change nothing, through the same index the replay applies', async () => {
    const s = openSession(root, { agent: 'bot' });
    const n = s.note({ author: 'a', text: 'x' });
    s.correct({ target_id: 'e_01KZVVGRNTBMSD610TK2GA9BFS', field: 'text', value: 'y', reason: 'typo' });
    s.correct({ target_id: n.id, field: 'ts', value: '2020-01-01T00:00:00.000000Z', reason: 'clock' });
    s.correct({ target_id: n.id, field: 'text', value: 5, reason: 'bad' });
    s.correct({ target_id: n.id, field: 'text', value: 'fixed', reason: 'ok' });
    s.end();
    const r = await verifySegments(sessionDirSegments(s.dir));
    const found = r.problems.map((p) => p.code);
    expect(found).toEqual(
      expect.arrayContaining([
        'correction_target_missing',
        'correction_forbidden_field',
        'correction_invalid_value',
      ]),
    );
    expect(
      found.filter((c) => c.startsWith('correction_')),
      JSON.stringify(found),
    ).toHaveLength(3);
    expect(r.ok).toBe(true); // warnings: the log is still readable as written
  });

  it('gives every code a severity and a documented meaning, the same in docs/verify.md and the CLI', async () => {
    const { readFileSync } = await import('node:fs');
    const doc = readFileSync('docs/verify.md', 'utf8');
    for (const [code, severity] of Object.entries(VERIFY_CODES)) {
      expect(doc).toMatch(new RegExp(`\\| \`${code}\` \\| ${severity} \\|`));
    }
    const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (error|warning|info) \| (.*) \|$/gm)].map((m) => [
      m[1],
      { severity: m[2], meaning: m[3] },
    ]);
    expect(Object.fromEntries(rows)).toEqual(VERIFY_CODE_INFO);
  });
});
