/**
 * The fast replay (issue 16: `replayBytes`, lib/log/read/fast-merge.ts, lib/log/read/line-cursor.ts) against the
 * merge it replaces (`replayBatches` / `replayRawReference`, the reader and merge of lib/log/read/reader.ts and
 * merge.ts): the same bytes in all three modes, the same problems reported (`onProblem`, in the same
 * order, with the same LineProblem) and the same correction problems, on every session fixture of
 * test/fixtures, on every .jsonl/.ndjson fixture file as a one-writer session, and on generated sessions
 * with quarantined lines, clocks stepping back, corrections before and after their targets, lines longer
 * than an output buffer, ids written with escapes, and a last line with no newline. Real files on disk; each session is read both in
 * the files' own chunks and in tiny random chunks (lines cut across blocks everywhere).
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTs } from '../../lib/log/format/time.js';
import {
  type CorrectionProblem,
  type LineProblem,
  newId,
  type ReplaySegment,
  replayBatches,
  replayBytes,
  replayRawReference,
  sessionDirSegments,
} from '../../lib/log/index.js';
import { sessionDirFileSegments } from '../../lib/log/read/segment-blocks.js';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'hansard-fast-replay-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Mode = 'raw' | 'ndjson' | 'text';

interface Outcome {
  bytes: Buffer;
  problems: Array<{ w: string } & Omit<LineProblem, 'bytes'> & { bytes: string }>;
  corrections: CorrectionProblem[];
}

function recorder() {
  const out: Outcome = { bytes: Buffer.alloc(0), problems: [], corrections: [] };
  return {
    out,
    onProblem: (w: string, p: LineProblem) =>
      out.problems.push({ w, ...p, bytes: Buffer.from(p.bytes).toString('hex') }),
    onCorrectionProblem: (p: CorrectionProblem) => out.corrections.push(p),
  };
}

async function fast(
  segments: ReplaySegment[],
  mode: Mode,
  outputBytes?: number,
  readBudgetBytes?: number,
): Promise<Outcome> {
  const r = recorder();
  const parts: Buffer[] = [];
  const options = {
    onProblem: r.onProblem,
    onCorrectionProblem: r.onCorrectionProblem,
    outputBytes,
    readBudgetBytes,
  };
  for await (const b of replayBytes(segments, mode, options)) parts.push(Buffer.from(b));
  r.out.bytes = Buffer.concat(parts);
  return r.out;
}

async function reference(segments: ReplaySegment[], mode: Mode): Promise<Outcome> {
  const r = recorder();
  const parts: Buffer[] = [];
  if (mode === 'raw') {
    for await (const b of replayRawReference(segments, { onProblem: r.onProblem }))
      parts.push(Buffer.from(b));
  } else {
    const options = { onProblem: r.onProblem, onCorrectionProblem: r.onCorrectionProblem };
    for await (const lines of replayBatches(segments, mode, options))
      parts.push(Buffer.from(lines.join(''), 'utf8'));
  }
  r.out.bytes = Buffer.concat(parts);
  return r.out;
}

/** A deterministic PRNG (mulberry32): the generated sessions are the same on every run. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The session's segments read in chunks of 1 to 40 bytes: every line is cut across blocks somewhere. */
function tinyChunks(segments: ReplaySegment[], seed: number): ReplaySegment[] {
  return segments.map((s) => ({
    w: s.w,
    open: (_chunk?: number, signal?: AbortSignal, start?: number) =>
      (async function* () {
        const rand = prng(seed);
        for await (const block of s.open(64 * 1024, signal, start)) {
          const b = Buffer.from(block);
          for (let p = 0; p < b.length; ) {
            const n = 1 + Math.floor(rand() * 40);
            yield b.subarray(p, p + n);
            p += n;
          }
        }
      })(),
  }));
}

/** Asserts the fast replay of `dir` equals the reference in every mode, in whole files and tiny chunks. */
async function expectSame(dir: string, outputBytes?: number): Promise<void> {
  for (const mode of ['raw', 'ndjson', 'text'] as const) {
    const want = await reference(sessionDirSegments(dir), mode);
    const got = await fast(sessionDirSegments(dir), mode, outputBytes);
    expect(got.bytes.toString('hex'), `${dir} ${mode}`).toBe(want.bytes.toString('hex'));
    expect(got.problems, `${dir} ${mode} onProblem`).toEqual(want.problems);
    expect(got.corrections, `${dir} ${mode} corrections`).toEqual(want.corrections);
    const cut = await fast(tinyChunks(sessionDirSegments(dir), 7), mode, outputBytes);
    expect(cut.bytes.toString('hex'), `${dir} ${mode} in tiny chunks`).toBe(want.bytes.toString('hex'));
    expect(cut.problems).toEqual(want.problems);
    expect(cut.corrections).toEqual(want.corrections);
    // Files read by position into 16 KiB blocks the reader reuses (the CLI's way).
    const files = await fast(sessionDirFileSegments(dir), mode, outputBytes, 1);
    expect(files.bytes.toString('hex'), `${dir} ${mode} as FileSegments`).toBe(want.bytes.toString('hex'));
    expect(files.problems).toEqual(want.problems);
    expect(files.corrections).toEqual(want.corrections);
  }
}

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe('the fast replay gives what the reference merge gives', () => {
  const sessionDirs = [...new Set(filesUnder(FIXTURES).filter((f) => /\/s_[^/]+\/w_[^/]+\.jsonl$/.test(f)))]
    .map((f) => f.slice(0, f.lastIndexOf('/')))
    .filter((d, i, all) => all.indexOf(d) === i);

  it('finds the session fixtures', () => {
    expect(sessionDirs.length).toBeGreaterThanOrEqual(2);
  });

  for (const d of sessionDirs) {
    it(`on the session fixture ${d.slice(FIXTURES.length + 1)}`, async () => {
      await expectSame(d);
    });
  }

  it('on every .jsonl and .ndjson fixture file as a one-writer session', async () => {
    const files = filesUnder(FIXTURES).filter((f) => /\.(jsonl|ndjson)$/.test(f));
    expect(files.length).toBeGreaterThan(5);
    for (const f of files) {
      const dir = join(root, newId('s'));
      mkdirSync(dir);
      copyFileSync(f, join(dir, `${newId('w')}.jsonl`));
      await expectSame(dir);
    }
  });

  for (const seed of [1, 2, 3, 4]) {
    it(`on a generated session with quarantined lines, clock steps and corrections (seed ${seed})`, async () => {
      const dir = generate(seed, seed === 1 ? 1 : 2 + seed);
      await expectSame(dir);
      // Output buffers smaller than some lines: those lines go out in buffers of their own.
      await expectSame(dir, 300);
    });
  }

  it('writes whole lines in buffers filled as far as the next line allows, a longer line alone', async () => {
    const dir = generate(2, 4);
    for (const mode of ['raw', 'ndjson'] as const) {
      const cap = 300;
      const buffers: Buffer[] = [];
      for await (const b of replayBytes(sessionDirSegments(dir), mode, { outputBytes: cap })) {
        buffers.push(Buffer.from(b));
      }
      expect(Buffer.concat(buffers).equals((await fast(sessionDirSegments(dir), mode)).bytes)).toBe(true);
      const lines = (b: Buffer) => b.toString('latin1').split('\n').slice(0, -1);
      let alone = 0;
      for (const [i, b] of buffers.entries()) {
        expect(b.length, `buffer ${i}`).toBeGreaterThan(0);
        expect(b.at(-1), `buffer ${i} ends a line`).toBe(0x0a);
        if (b.length > cap) {
          expect(lines(b), `buffer ${i} over ${cap} bytes is one line`).toHaveLength(1);
          alone++;
        }
        const next = buffers[i + 1];
        // the next buffer's first line did not fit in this one (raw: lines are copied as they are; a
        // rendered line is checked against 3 bytes a UTF-16 unit, so its buffer may close earlier)
        if (mode === 'raw' && next && b.length <= cap)
          expect(b.length + lines(next)[0]!.length + 1, `buffer ${i}`).toBeGreaterThan(cap);
      }
      expect(alone, mode).toBeGreaterThan(0);
      expect(buffers.length, mode).toBeGreaterThan(10);
    }
    // Two lines that fill a buffer exactly go out together.
    const whole = (await fast(sessionDirSegments(dir), 'raw')).bytes;
    const firstTwo = whole.subarray(0, whole.indexOf(0x0a, whole.indexOf(0x0a) + 1) + 1);
    const exact: Buffer[] = [];
    for await (const b of replayBytes(sessionDirSegments(dir), 'raw', { outputBytes: firstTwo.length })) {
      exact.push(Buffer.from(b));
    }
    expect(exact[0]!.equals(firstTwo)).toBe(true);
  });

  it('on a generated session of segments many blocks long (3 writers, ~1,500 lines each)', async () => {
    const dir = generate(9, 3, 1500);
    expect(statSync(join(dir, readdirSync(dir)[0]!)).size).toBeGreaterThan(100_000);
    await expectSame(dir);
  });
});

/**
 * A session of `writers` writers (lines built by hand, envelope keys in the format's order): messages and
 * notes, clocks that step back and a ts that is no timestamp, corrections of earlier and of later
 * messages of any writer, of missing targets and of forbidden fields, invalid values, quarantined lines of
 * every kind (not JSON, not an object, no envelope, invalid UTF-8, empty, torn, nested too deep), long
 * lines, and on some writers a last line with no newline.
 */
function generate(seed: number, writers: number, lines = 40): string {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const sid = newId('s');
  const dir = join(root, sid);
  mkdirSync(dir);
  const ws = Array.from({ length: writers }, () => newId('w')).sort();
  // Message ids of every writer, decided first, so a correction can name one written later.
  const messageIds = ws.flatMap(() => Array.from({ length: 6 }, () => newId('m')));
  const t0 = Date.UTC(2026, 10, 1) * 1000;
  ws.forEach((w, wi) => {
    const parts: Buffer[] = [];
    let clock = t0 + 1000 * Math.floor(rand() * 50);
    let seq = 0;
    let m = 0;
    let turn = '';
    let action = '';
    const line = (type: string, id: string, fields: Record<string, unknown>, ts?: string) => {
      seq += 1;
      // Whole ms, so writers often share a ts: then the running maximum and the writer id decide.
      clock += 1000 * (rand() < 0.1 ? -Math.floor(rand() * 20) : Math.floor(rand() * 3));
      const env = { v: 3, sid, w, seq, id, ts: ts ?? formatTs(clock), mono: seq / 1000, type };
      let text = JSON.stringify({ ...env, ...fields });
      // Some ids written with an escape (the same id to a parser): the replay with corrections must
      // still find a corrected one (its id's filter hash is of the decoded text, not of the bytes).
      if (type === 'message' && rand() < 0.3) text = text.replace(`"id":"m_`, '"id":"\\u006d_');
      parts.push(Buffer.from(`${text}\n`));
    };
    line('writer.start', w, {
      writer_id: w,
      meta: { agent: `bot-${wi}`, app: null, hansard_version: '0.1.0', host: 'h', pid: wi },
      redacted: [],
    });
    const quarantined = [
      'not json at all',
      '',
      '[1,2,3]',
      '{"v":3,"sid":"x"}',
      '{"v":3,"sid":"s","w":"w","seq":1,"id":"e","ts":"t","mono":0,"type":"note"',
      `${'['.repeat(600)}${']'.repeat(600)}`,
    ];
    for (let k = 0; k < lines; k++) {
      const r = rand();
      if (r < 0.12) parts.push(Buffer.concat([Buffer.from(pick(quarantined)), Buffer.from('\n')]));
      else if (r < 0.15) parts.push(Buffer.from([0x7b, 0xff, 0xfe, 0x22, 0x7d, 0x0a]));
      else if (r < 0.3 && m < 6) {
        const text = rand() < 0.1 ? `long ${'x'.repeat(700)} \u00e9\u{1f600}` : `message ${k} \u00e9\n\ttab`;
        line('message', messageIds[wi * 6 + m++]!, {
          user_id: `p${wi}`,
          text,
          client_ts: null,
          redacted: [],
        });
      } else if (r < 0.45) {
        const target = rand() < 0.15 ? newId('m') : pick(messageIds);
        const field = rand() < 0.15 ? 'ts' : rand() < 0.1 ? 'user_id' : 'text';
        const value = field === 'user_id' ? 5 : `corrected by ${w} at ${k}`;
        line('correction', newId('e'), { target_id: target, field, value, reason: `fix ${k}`, redacted: [] });
      } else if (r < 0.5) {
        line('note', newId('e'), { author: `a${wi}`, text: 'no timestamp', redacted: [] }, 'not-a-time');
      } else if (r < 0.6)
        line('note', newId('e'), { author: `a${wi}`, text: `note ${k}\u202e`, redacted: [] });
      else if (r < 0.68) {
        // Turns with and without recorded context, some with fields of the wrong type (not decodable).
        turn = newId('t');
        const ctx = pick([null, [], [pick(messageIds)], [pick(messageIds), 5], 'm_x']);
        line('turn.start', turn, rand() < 0.8 ? { turn_id: turn, context_message_ids: ctx } : {});
      } else if (r < 0.8) {
        action = newId('a');
        const causedBy = pick([null, null, [], [pick(messageIds)], 7, undefined]);
        line('agent.action', action, {
          turn_id: rand() < 0.9 ? turn : null,
          tool: 'Bash',
          input: { command: `ls ${k}` },
          call_id: null,
          caused_by: causedBy,
          redacted: [],
        });
      } else if (r < 0.9) {
        const status = rand() < 0.9 ? 'ok' : 3;
        line('agent.action_result', newId('e'), {
          action_id: action,
          status,
          output: `out ${k}`,
          redacted: [],
        });
      } else {
        const causedBy = pick([null, undefined, [pick(messageIds)]]);
        line('agent.output', newId('e'), {
          turn_id: turn,
          text: `said ${k}`,
          caused_by: causedBy,
          redacted: [],
        });
      }
    }
    if (wi % 2 === 1) parts.push(Buffer.from('{"v":3,"sid":"cut off mid-wr'));
    writeFileSync(join(dir, `${w}.jsonl`), Buffer.concat(parts));
  });
  return dir;
}
