/**
 * hcn's `usage` events as the recorder keeps them (issue 27 item 1, seed 002 "Tool results and usage";
 * contract lib/log/format/usage-note.ts, `usage_source: 'hcn'`): one `token_usage` note per event, each
 * field the event has copied as it is and none it lacks (missing reporting is unknown, not zero), and the
 * harness when the stream (`session`, observer `started`) or the caller (`hansard run HARNESS`) names it.
 * Inputs: test/fixtures/usage/hcn-*.ndjson, shaped as hcn prints them.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HcnRecorder, type HcnRecorderOptions } from '../../lib/importers/hcn.js';
import { tmpDirs } from '../support/tmp.js';
import { type Ev, marked, ofType, readBack } from './stream-helpers.js';

const scratch = tmpDirs('hansard-hcn-usage-');
const FIX = 'test/fixtures/usage';

// biome-ignore lint/suspicious/noExplicitAny: the test reads the fixtures' records field by field
type Rec = Record<string, any>;
const records = (name: string): Rec[] =>
  readFileSync(`${FIX}/${name}`, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Rec);

/** Records a fixture through `HcnRecorder` (as `hansard import hcn` does) and reads the segment back. */
async function record(name: string, opts: Partial<HcnRecorderOptions> = {}): Promise<Ev[]> {
  const rec = new HcnRecorder({ outDir: scratch.make(), app: 'test', ...opts });
  rec.push(readFileSync(`${FIX}/${name}`));
  const r = rec.finish();
  if (r === null) throw new Error('nothing recorded');
  const events = await readBack(r.path);
  // every usage note is counted
  expect(r.counts.tokenUsage).toBe(marked(events, 'token_usage').length);
  return events;
}
const usageOf = (events: Ev[]) => marked(events, 'token_usage');

describe('hcn session codex --json: two cumulative session snapshots', async () => {
  const events = await record('hcn-codex-session.ndjson');
  const usages = records('hcn-codex-session.ndjson').filter((x) => x.kind === 'usage');

  it('keeps each snapshot as hcn printed it, never summed, with the harness of the session record', () => {
    expect(usageOf(events).map((n) => n.extra)).toEqual([
      {
        import_kind: 'token_usage',
        hcn_kind: 'usage',
        usage_source: 'hcn',
        scope: 'session',
        inputTokens: 12210,
        outputTokens: 187,
        cacheReadTokens: 9472,
        reasoningTokens: 64,
        inputIncludesCache: true,
        harness: 'codex',
      },
      {
        import_kind: 'token_usage',
        hcn_kind: 'usage',
        usage_source: 'hcn',
        scope: 'session',
        inputTokens: 24731,
        outputTokens: 240,
        cacheReadTokens: 21504,
        reasoningTokens: 64,
        inputIncludesCache: true,
        harness: 'codex',
      },
    ]);
    // the note's text is the event exactly
    expect(usageOf(events).map((n) => JSON.parse(n.text as string))).toEqual(usages);
  });

  it('leaves out what hcn did not report (no cacheWriteTokens, totalTokens, costUsd, model: unknown)', () => {
    for (const n of usageOf(events))
      for (const k of ['cacheWriteTokens', 'totalTokens', 'costUsd', 'model', 'callId'])
        expect(n.extra).not.toHaveProperty(k);
  });

  it('puts each snapshot in the turn that reported it', () => {
    const notes = usageOf(events);
    const turnOf = (e: Ev) =>
      events.slice(0, events.indexOf(e)).filter((x) => x.type === 'turn.start').length;
    expect(notes.map(turnOf)).toEqual([1, 2]);
    const ends = ofType(events, 'turn.end');
    for (const [i, n] of notes.entries()) expect(events.indexOf(n)).toBeLessThan(events.indexOf(ends[i]!));
  });
});

describe('an hcn-observer/1 stream of a Claude run: turn and per-model session usage', async () => {
  const events = await record('hcn-claude-observer.ndjson');
  const usages = records('hcn-claude-observer.ndjson')
    .filter((x) => x.record === 'event' && x.event.kind === 'usage')
    .map((x) => x.event);

  it("keeps every field each event has, model and costUsd too, and the started record's harness", () => {
    expect(usages).toHaveLength(3);
    expect(usageOf(events).map((n) => n.extra)).toEqual(
      usages.map(({ kind: _kind, ...fields }) => ({
        import_kind: 'token_usage',
        hcn_kind: 'usage',
        usage_source: 'hcn',
        ...fields,
        harness: 'claude',
      })),
    );
    expect(usageOf(events).map((n) => (n.extra as Rec).model)).toEqual([
      undefined,
      'claude-opus-5[1m]',
      'claude-haiku-4-5-20251001',
    ]);
    expect((usageOf(events)[1]!.extra as Rec).costUsd).toBe(0.069563);
  });
});

describe('hcn run --json with no session record', () => {
  it('names the harness the caller ran (hansard run HARNESS), and keeps a tool usage of callId and cost only', async () => {
    const events = await record('hcn-run-bare-usage.ndjson', { harness: 'codex' });
    expect(usageOf(events).map((n) => n.extra)).toEqual([
      {
        import_kind: 'token_usage',
        hcn_kind: 'usage',
        usage_source: 'hcn',
        scope: 'session',
        inputTokens: 51306,
        outputTokens: 80,
        cacheReadTokens: 36352,
        inputIncludesCache: true,
        harness: 'codex',
      },
      {
        import_kind: 'token_usage',
        hcn_kind: 'usage',
        usage_source: 'hcn',
        scope: 'tool',
        callId: 'item_7',
        costUsd: 0.0004,
        harness: 'codex',
      },
    ]);
  });

  it('names no harness when neither the stream nor the caller does', async () => {
    const events = await record('hcn-run-bare-usage.ndjson');
    for (const n of usageOf(events)) expect(n.extra).not.toHaveProperty('harness');
    expect(usageOf(events)).toHaveLength(2);
  });
});
