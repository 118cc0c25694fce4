/**
 * Issue 16 attacks on the fast replay (lib/log/read/fast-merge.ts, line-cursor.ts, envelope-scan.ts,
 * json-scan.ts, line-fields.ts, text-*.ts, attribution-window.ts, id-table.ts): sessions written to break
 * it, each replayed by `replayBytes` over the CLI's FileSegments (and over whole-file segments with
 * 200-byte output buffers) and compared byte for byte with the reference (`replayBatches`,
 * `replayRawReference`) in all three modes; and `hansard replay DIR` as a real process.
 *
 * All held when written:
 * - generated sessions: ids with JSON escapes anywhere in them, duplicate `id`/`type` keys (the last
 *   wins), an escaped `ts` key, nested `sid` objects, whitespace around every comma, CRLF line ends,
 *   a BOM before the first line, offsets in ts, ts without a fraction, corrections of every field with
 *   values of every type, lines of garbage, unknown types, a last line cut mid-write;
 * - ids whose FNV-1a hashes are equal (hashIdBytes: the CorrectionIndex filter and the IdTable's index)
 *   with a correction naming one of them only;
 * - a corrected event line of 1.5 MiB (longer than the 1 MiB output buffer) in ndjson and text, with
 *   CRLF;
 * - 300 writers each posting messages before turns that record no context (windows of 3,000
 *   candidates: contested marks listing every one);
 * - 2,000 writers under `ulimit -n 256`, through bin/hansard's CLI (the current source, run by tsx).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hashIdText } from '../../lib/log/format/envelope-scan.js';
import { formatTs } from '../../lib/log/format/time.js';
import {
  newId,
  type ReplaySegment,
  replayBatches,
  replayBytes,
  replayRawReference,
  sessionDirSegments,
} from '../../lib/log/index.js';
import { sessionDirFileSegments } from '../../lib/log/read/segment-blocks.js';

const ROOT = resolve(import.meta.dirname, '../..');
const root = mkdtempSync(join(tmpdir(), 'hansard-attack3-fast-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Mode = 'raw' | 'ndjson' | 'text';

function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function collect(it: AsyncIterable<Uint8Array | string>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const b of it) parts.push(Buffer.from(b));
  return Buffer.concat(parts);
}

async function reference(dir: string, mode: Mode): Promise<Buffer> {
  if (mode === 'raw') return collect(replayRawReference(sessionDirSegments(dir), {}));
  const parts: Buffer[] = [];
  for await (const lines of replayBatches(sessionDirSegments(dir), mode, {}))
    parts.push(Buffer.from(lines.join(''), 'utf8'));
  return Buffer.concat(parts);
}

const fast = (segments: ReplaySegment[], mode: Mode, outputBytes?: number) =>
  collect(replayBytes(segments, mode, outputBytes ? { outputBytes } : {}));

/** The first line where `got` differs from `want`, for the failure message. */
function firstDiff(want: Buffer, got: Buffer): string {
  const a = want.toString('utf8').split('\n');
  const b = got.toString('utf8').split('\n');
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `line ${i}\nwant: ${a[i]?.slice(0, 300)}\ngot:  ${b[i]?.slice(0, 300)}`;
}

async function expectSame(dir: string, modes: readonly Mode[] = ['raw', 'ndjson', 'text']): Promise<void> {
  for (const mode of modes) {
    const want = await reference(dir, mode);
    const got = await fast(sessionDirFileSegments(dir), mode);
    expect(got.equals(want), `${mode} ${dir}\n${firstDiff(want, got)}`).toBe(true);
    const small = await fast(sessionDirSegments(dir), mode, 200);
    expect(small.equals(want), `${mode} (200-byte buffers) ${dir}\n${firstDiff(want, small)}`).toBe(true);
  }
}

const T0 = Date.UTC(2026, 10, 1) * 1000;
const env = (sid: string, w: string, seq: number, id: string, ts: string, type: string) => ({
  v: 3,
  sid,
  w,
  seq,
  id,
  ts,
  mono: seq / 1000,
  type,
});

/** A session of hostile lines (see the module doc), deterministic for its seed. */
function hostile(seed: number): string {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const sid = newId('s');
  const dir = join(root, sid);
  mkdirSync(dir);
  const ws = Array.from({ length: 1 + Math.floor(rand() * 5) }, () => newId('w'));
  const ids = Array.from({ length: 12 }, () => newId(pick(['m', 'a', 't', 'e'] as const)));
  ids.push('m_é', 'x', '', 'm_\u2028', 'dup');
  const esc = (s: string) =>
    rand() < 0.3
      ? [...s]
          .map((ch) =>
            rand() < 0.3 && ch.length === 1 ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}` : ch,
          )
          .join('')
      : s;
  for (const w of ws) {
    const parts: string[] = [];
    let seq = 0;
    let clock = T0;
    const line = (type: string, id: string, fields: Record<string, unknown>) => {
      seq++;
      clock += 1000 * Math.floor(rand() * 3) - (rand() < 0.05 ? 5000 : 0);
      let ts = formatTs(clock);
      if (rand() < 0.05) ts = ts.replace('Z', '+00:00');
      if (rand() < 0.03) ts = ts.slice(0, 19);
      let text = JSON.stringify({ ...env(sid, w, seq, id, ts, type), ...fields });
      text = text.replace(`"id":${JSON.stringify(id)}`, `"id":"${esc(JSON.stringify(id).slice(1, -1))}"`);
      if (rand() < 0.08) text = text.replace(`"id":`, `"id":"zzz","id":`);
      if (rand() < 0.05) text = text.replace(`"type":`, `"type":"note","type":`);
      if (rand() < 0.05) text = text.replace(/,/g, ' , ');
      if (rand() < 0.05) text = text.replace('"ts"', '"t\\u0073"');
      if (rand() < 0.05) text = `${text.slice(0, -1)},"sid":{"sid":1}}`;
      parts.push(text + (rand() < 0.1 ? '\r\n' : '\n'));
    };
    line('writer.start', w, { writer_id: w, meta: { agent: 'a' }, redacted: [] });
    if (rand() < 0.2) parts.unshift('\uFEFF');
    let turn = newId('t');
    let action = newId('a');
    const n = 20 + Math.floor(rand() * 60);
    for (let k = 0; k < n; k++) {
      const r = rand();
      if (r < 0.2)
        line('message', pick(ids), {
          user_id: pick(['p', 'q', 'é', '\u0000x', 5, null]),
          text: pick(['hi', 'x\ny', '\u{1f600}', 'a\\b']),
          client_ts: null,
          redacted: [],
        });
      else if (r < 0.35)
        line('correction', pick(ids), {
          target_id: pick(ids),
          field: pick(['text', 'user_id', 'ts', 'status', 'output', 'input', 'tool']),
          value: pick(['v', 5, null, { a: 1 }, 'ok', 'error']),
          reason: 'r',
          redacted: [],
        });
      else if (r < 0.45) {
        turn = pick(ids);
        line('turn.start', turn, {
          turn_id: turn,
          context_message_ids: pick([null, [], [pick(ids)], [pick(ids), pick(ids)]]),
        });
      } else if (r < 0.6) {
        action = pick(ids);
        line('agent.action', action, {
          turn_id: turn,
          tool: pick(['Bash', 'x']),
          input: pick([
            { command: 'ls' },
            { b: 1, a: [1, 2] },
            { '1': 2, a: 1 },
            { a: 1.5 },
            { a: -0 },
            'str',
            { a: { a: 1, a2: 'x\u00e9' } },
          ]),
          call_id: null,
          caused_by: pick([null, [], [pick(ids)]]),
          redacted: [],
        });
      } else if (r < 0.72)
        line('agent.action_result', pick(ids), {
          action_id: action,
          status: pick(['ok', 'error', 'cancelled', 3]),
          output: pick(['o', { x: 1 }, [1, 2], null, { y: [{}] }]),
          error: pick([null, 'bad']),
          exit_code: pick([0, 1, null, 1.5]),
          redacted: [],
        });
      else if (r < 0.8)
        line('agent.output', pick(ids), {
          turn_id: turn,
          text: 'said',
          caused_by: pick([null, [pick(ids)]]),
          redacted: [],
        });
      else if (r < 0.85) line('turn.end', pick(ids), { turn_id: turn, status: 'completed' });
      else if (r < 0.9) line('note', pick(ids), { author: 'a', text: 'n', redacted: [] });
      else if (r < 0.93) line('participant.join', pick(ids), { user_id: 'p', display_name: null });
      else if (r < 0.96) parts.push(pick(['garbage\n', '{}\n', '\n', '{"v":3}\n', '\r\n']));
      else line('weird.type', pick(ids), { x: 1 });
    }
    if (rand() < 0.3) parts.push('{"v":3,"sid":"cut');
    writeFileSync(join(dir, `${w}.jsonl`), parts.join(''));
  }
  return dir;
}

/** Two ULID-shaped ids `m_…` with the same FNV-1a hash (a birthday search). */
function collidingIds(): [string, string] {
  const seen = new Map<number, string>();
  const rand = prng(99);
  const digits = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  for (;;) {
    let id = 'm_0';
    for (let k = 0; k < 25; k++) id += digits[Math.floor(rand() * 32)];
    const h = hashIdText(id);
    const other = seen.get(h);
    if (other !== undefined && other !== id) return [other, id];
    seen.set(h, id);
  }
}

describe('the fast replay against the reference on hostile sessions', () => {
  it('60 generated hostile sessions, all three modes', async () => {
    for (let seed = 1; seed <= 60; seed++) await expectSame(hostile(seed));
  }, 300_000);

  it('ids with equal FNV-1a hashes: a correction of one never reaches the other', async () => {
    const [x, y] = collidingIds();
    expect(hashIdText(x)).toBe(hashIdText(y));
    const sid = newId('s');
    const w = newId('w');
    const dir = join(root, sid);
    mkdirSync(dir);
    const ts = (k: number) => formatTs(T0 + k * 1000);
    const lines = [
      { ...env(sid, w, 1, w, ts(1), 'writer.start'), writer_id: w, meta: {}, redacted: [] },
      { ...env(sid, w, 2, x, ts(2), 'message'), user_id: 'p', text: 'x', client_ts: null, redacted: [] },
      { ...env(sid, w, 3, y, ts(3), 'message'), user_id: 'q', text: 'y', client_ts: null, redacted: [] },
      {
        ...env(sid, w, 4, newId('e'), ts(4), 'correction'),
        target_id: y,
        field: 'text',
        value: 'y fixed',
        reason: 'r',
        redacted: [],
      },
    ];
    // x written with an escape, so one of the two is hashed from its decoded text
    const text = lines
      .map((l) => JSON.stringify(l))
      .map((l, k) => (k === 1 ? l.replace(`"id":"m_`, '"id":"\\u006d_') : l));
    writeFileSync(join(dir, `${w}.jsonl`), `${text.join('\n')}\n`);
    await expectSame(dir);
    const out = (await fast(sessionDirFileSegments(dir), 'ndjson')).toString();
    expect(out).toContain('"text":"y fixed"');
    expect(out.match(/"corrected"/g)).toHaveLength(1);
  });

  it('a corrected 1.5 MiB line (over the 1 MiB output buffer) with CRLF, ndjson and text', async () => {
    const sid = newId('s');
    const w = newId('w');
    const dir = join(root, sid);
    mkdirSync(dir);
    const m = newId('m');
    const big = `${'é'.repeat(400_000)}${'x'.repeat(700_000)}`;
    const lines = [
      JSON.stringify({ ...env(sid, w, 1, w, formatTs(T0), 'writer.start'), writer_id: w, meta: {} }),
      JSON.stringify({ ...env(sid, w, 2, m, formatTs(T0 + 1), 'message'), user_id: 'p', text: big }),
      JSON.stringify({
        ...env(sid, w, 3, newId('e'), formatTs(T0 + 2), 'correction'),
        target_id: m,
        field: 'text',
        value: `${big}!`,
        reason: 'r',
      }),
      JSON.stringify({ ...env(sid, w, 4, newId('e'), formatTs(T0 + 3), 'note'), author: 'a', text: 'after' }),
    ];
    writeFileSync(join(dir, `${w}.jsonl`), `${lines.join('\r\n')}\r\n`);
    await expectSame(dir);
  }, 120_000);

  it('300 writers posting 10 messages each before turns with no recorded context (huge windows)', async () => {
    const sid = newId('s');
    const dir = join(root, sid);
    mkdirSync(dir);
    const ws = Array.from({ length: 300 }, () => newId('w'));
    ws.forEach((w, wi) => {
      const out: string[] = [
        JSON.stringify({ ...env(sid, w, 1, w, formatTs(T0), 'writer.start'), writer_id: w, meta: {} }),
      ];
      let seq = 1;
      for (let k = 0; k < 10; k++)
        out.push(
          JSON.stringify({
            ...env(sid, w, ++seq, newId('m'), formatTs(T0 + 1000 + k), 'message'),
            user_id: `person-${wi}`,
            text: `m ${k}`,
          }),
        );
      if (wi % 30 === 0) {
        const t = newId('t');
        out.push(
          JSON.stringify({ ...env(sid, w, ++seq, t, formatTs(T0 + 5000), 'turn.start'), turn_id: t }),
          JSON.stringify({
            ...env(sid, w, ++seq, newId('a'), formatTs(T0 + 5001), 'agent.action'),
            turn_id: t,
            tool: 'Bash',
            input: { command: 'ls' },
            caused_by: null,
          }),
          JSON.stringify({
            ...env(sid, w, ++seq, newId('e'), formatTs(T0 + 5002), 'agent.output'),
            turn_id: t,
            text: 'done',
            caused_by: null,
          }),
        );
      }
      writeFileSync(join(dir, `${w}.jsonl`), `${out.join('\n')}\n`);
    });
    await expectSame(dir, ['text', 'ndjson']);
  }, 300_000);
});

describe('invalid UTF-8 inside event lines', () => {
  it('overlong, surrogate, truncated and stray bytes inside strings of otherwise valid events', async () => {
    const sid = newId('s');
    const dir = join(root, sid);
    mkdirSync(dir);
    const bad = [[0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xff], [0xf4, 0x90, 0x80, 0x80], [0x80]];
    for (let k = 0; k < 3; k++) {
      const w = newId('w');
      const parts: Buffer[] = [
        Buffer.from(
          `${JSON.stringify({ ...env(sid, w, 1, w, formatTs(T0 + k), 'writer.start'), writer_id: w, meta: {} })}\n`,
        ),
      ];
      let seq = 1;
      for (const [i, b] of bad.entries()) {
        const m = newId('m');
        const good = JSON.stringify({
          ...env(sid, w, ++seq, m, formatTs(T0 + 10 + i), 'message'),
          user_id: 'p',
          text: 'AB',
        });
        const [before, after] = good.split('AB');
        // the bad bytes inside the text, in the id, in a key
        parts.push(Buffer.concat([Buffer.from(before!), Buffer.from(b), Buffer.from(`${after}\n`)]));
        parts.push(Buffer.from(`${good}\n`));
        parts.push(
          Buffer.from(
            `${JSON.stringify({ ...env(sid, w, ++seq, newId('e'), formatTs(T0 + 20 + i), 'correction'), target_id: m, field: 'text', value: 'fixed', reason: 'r' })}\n`,
          ),
        );
        const inKey = Buffer.from(
          `${JSON.stringify({ ...env(sid, w, ++seq, newId('e'), formatTs(T0 + 30 + i), 'note'), author: 'a', text: 'k' }).slice(0, -1)},"`,
        );
        parts.push(Buffer.concat([inKey, Buffer.from(b), Buffer.from('":1}\n')]));
      }
      writeFileSync(join(dir, `${w}.jsonl`), Buffer.concat(parts));
    }
    await expectSame(dir);
  });
});

describe('hansard replay DIR as a process', () => {
  it('2,000 writers under ulimit -n 256: the same bytes as the reference, in all three modes', async () => {
    const sid = newId('s');
    const dir = join(root, sid);
    mkdirSync(dir);
    for (let k = 0; k < 2000; k++) {
      const w = newId('w');
      const m = newId('m');
      const lines = [
        JSON.stringify({ ...env(sid, w, 1, w, formatTs(T0 + k), 'writer.start'), writer_id: w, meta: {} }),
        JSON.stringify({
          ...env(sid, w, 2, m, formatTs(T0 + 5000 - k), 'message'),
          user_id: `p${k % 7}`,
          text: 'hi',
        }),
        JSON.stringify({
          ...env(sid, w, 3, newId('e'), formatTs(T0 + 6000), 'correction'),
          target_id: m,
          field: 'text',
          value: 'fixed',
          reason: 'r',
        }),
      ];
      writeFileSync(join(dir, `${w}.jsonl`), `${lines.join('\n')}\n`);
    }
    const script = join(root, 'replay.mts');
    writeFileSync(
      script,
      `import { runCli } from ${JSON.stringify(join(ROOT, 'lib/client/cli/main.ts'))};
const io = { stdout: process.stdout, stderr: process.stderr, env: {}, cwd: process.cwd() };
process.exitCode = await runCli(process.argv.slice(2), io);\n`,
    );
    const tsx = join(ROOT, 'node_modules/.bin/tsx');
    for (const [mode, args] of [
      ['ndjson', []],
      ['raw', ['--raw']],
      ['text', ['--format', 'text']],
    ] as const) {
      const r = spawnSync(
        'bash',
        ['-c', `ulimit -n 256 && exec "$0" "$@"`, tsx, script, 'replay', dir, ...args],
        {
          cwd: ROOT,
          maxBuffer: 256 * 1024 * 1024,
          timeout: 240_000,
        },
      );
      expect(r.status, `${mode}: ${r.stderr?.toString().slice(-2000)}`).toBe(0);
      const want = await reference(dir, mode);
      expect(r.stdout.equals(want), `${mode}\n${firstDiff(want, r.stdout)}`).toBe(true);
    }
  }, 900_000);
});
