import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type LineProblem,
  listSegments,
  type MergedEvent,
  mergeSegments,
  type ReplayFormat,
  replayLines,
  sessionDirSegments,
  sessionDirSources,
} from '../../lib/log/index.js';

const SEED_DIR = 'test/fixtures/seed-session/s_01KZVVGRNR3D5V708Z4NPGG11H';
const SEED_SEGMENT = join(SEED_DIR, 'w_01KZVVGRNRKM87Z6X6TXYQR7EX.jsonl');
const MULTI = 'test/fixtures/multi-writer';

function multiWriterDir(): string {
  const dirs = readdirSync(MULTI).filter((n) => n.startsWith('s_'));
  expect(dirs).toHaveLength(1);
  return join(MULTI, dirs[0]!);
}

async function replay(
  dir: string,
  format: ReplayFormat,
  onProblem?: (w: string, p: LineProblem) => void,
): Promise<string> {
  let out = '';
  for await (const l of replayLines(sessionDirSegments(dir), format, { onProblem })) out += l;
  return out;
}

async function merged(dir: string): Promise<MergedEvent[]> {
  const out: MergedEvent[] = [];
  for await (const m of mergeSegments(sessionDirSources(dir))) out.push(m);
  return out;
}

/** A text replay line: `ts  who  type  what`. */
const TEXT_LINE = /^(\S+) {2}(\S+) +(\S+)(?: +(.*))?$/;

function parseText(line: string): { ts: string; who: string; type: string; what: string } {
  const m = TEXT_LINE.exec(line);
  expect(m, line).not.toBeNull();
  return { ts: m![1]!, who: m![2]!, type: m![3]!, what: m![4] ?? '' };
}

describe('ndjson replay', () => {
  it('of the seed session equals the segment bytes', async () => {
    expect(await replay(SEED_DIR, 'ndjson')).toBe(readFileSync(SEED_SEGMENT, 'utf8'));
  });

  it('of the multi-writer fixture gives every line as written, each once', async () => {
    const dir = multiWriterDir();
    const out = await replay(dir, 'ndjson');
    expect(out.endsWith('\n')).toBe(true);
    const lines = listSegments(dir).flatMap((s) => readFileSync(s.path, 'utf8').split('\n').filter(Boolean));
    expect(out.slice(0, -1).split('\n').sort()).toEqual(lines.sort());
  });

  it('leaves out quarantined lines and reports them to onProblem', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'hansard-replay-'));
    try {
      const dir = join(tmp, 's_01KZVVGRNR3D5V708Z4NPGG11H');
      cpSync(SEED_DIR, dir, { recursive: true });
      const path = join(dir, 'w_01KZVVGRNRKM87Z6X6TXYQR7EX.jsonl');
      const [l1, l2, l3] = readFileSync(path, 'utf8').split('\n');
      writeFileSync(path, `${l1}\n${l2!.slice(0, 30)}\n${l2}\n${l3}\n${l3!.slice(0, 20)}`);
      const codes: string[] = [];
      const out = await replay(dir, 'ndjson', (_w, p) => codes.push(p.code));
      expect(out).toBe(readFileSync(SEED_SEGMENT, 'utf8'));
      expect(codes).toEqual(['truncated_line', 'truncated_line']);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('text replay', () => {
  it('of the seed session gives one line per event with its ts, who and type', async () => {
    const lines = (await replay(SEED_DIR, 'text')).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map(parseText)).toMatchObject([
      { ts: '2026-08-12T20:44:44.089961Z', who: 'support-bot', type: 'writer.start' },
      {
        ts: '2026-08-12T20:44:44.090132Z',
        who: 'priya',
        type: 'message',
        what: 'm_01KZVVGRNTBMSD610TK2GA9BFS: restart the payments worker',
      },
      { ts: '2026-08-12T20:44:44.090201Z', who: 'support-bot', type: 'turn.start' },
    ]);
  });

  it('of the multi-writer fixture names the agent or user of every event, one line each', async () => {
    const dir = multiWriterDir();
    const events = await merged(dir);
    const lines = (await replay(dir, 'text')).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(events.length);
    const agents = new Map<string, string>();
    for (const { event } of events) {
      if (event.type === 'writer.start') agents.set(event.w, (event.obj.meta as { agent: string }).agent);
    }
    expect([...agents.values()].sort()).toEqual(['alpha-bot', 'beta-bot', 'gamma-bot']);
    events.forEach(({ event }, i) => {
      const who =
        event.type === 'message'
          ? (event.obj.user_id as string)
          : event.type === 'note'
            ? (event.obj.author as string)
            : agents.get(event.w);
      expect(parseText(lines[i]!)).toMatchObject({ ts: event.ts, who, type: event.type });
    });
  });

  it('shows null and [] causes differently', async () => {
    const lines = (await replay(multiWriterDir(), 'text')).split('\n');
    const starts = lines.filter((l) => l.includes(' turn.start '));
    expect(starts.some((l) => l.includes('no context recorded'))).toBe(true);
    expect(starts.some((l) => l.includes('context: none (recorded)'))).toBe(true);
    expect(starts.some((l) => /context m_/.test(l))).toBe(true);
  });
});

describe('replay is deterministic', () => {
  it.each(['ndjson', 'text'] as const)(
    'gives identical %s bytes for the multi-writer fixture twice',
    async (format) => {
      const dir = multiWriterDir();
      const first = await replay(dir, format);
      const second = await replay(dir, format);
      expect(first.length).toBeGreaterThan(0);
      expect(Buffer.from(second).equals(Buffer.from(first))).toBe(true);
    },
  );
});
