import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeEvent, parseLine, serializeEvent } from '../../lib/log/index.js';

const SEED = 'test/fixtures/seed-session/s_01KZVVGRNR3D5V708Z4NPGG11H/w_01KZVVGRNRKM87Z6X6TXYQR7EX.jsonl';

describe('the seed example lines (golden)', () => {
  const lines = readFileSync(SEED, 'utf8').split('\n').filter(Boolean);

  it('are the three lines printed in seed 001', () => {
    const seed = readFileSync('docs/spec/001_722efaa11f8f136a.txt', 'utf8');
    expect(lines).toHaveLength(3);
    for (const l of lines) expect(seed).toContain(`\n${l}\n`);
  });

  it.each([0, 1, 2])('line %i parses and serializes back to the same bytes', (i) => {
    const line = lines[i]!;
    const parsed = parseLine(Buffer.from(line), i + 1, 0);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const ev = decodeEvent(parsed.event);
    expect('unknown' in ev).toBe(false);
    expect(Object.keys(ev.extra)).toEqual([]);
    expect(serializeEvent(ev)).toBe(line);
  });

  it('decodes null and [] and the meta object as written', () => {
    const [start, msg, turn] = lines.map((l, i) => {
      const p = parseLine(Buffer.from(l), i + 1, 0);
      if (!p.ok) throw new Error('unparsed');
      return decodeEvent(p.event) as unknown as Record<string, unknown>;
    });
    expect(start!.meta).toEqual({
      agent: 'support-bot',
      app: null,
      hansard_version: '0.1.0',
      host: 'demo-host',
      pid: 12345,
    });
    expect(msg!.client_ts).toBeNull();
    expect(turn!.context_message_ids).toEqual(['m_01KZVVGRNTBMSD610TK2GA9BFS']);
  });
});
