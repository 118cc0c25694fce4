/**
 * The Claude Code importer against the small inputs it got wrong (test/fixtures/cases/README.md: 01, 02,
 * 06) and the real claude-code-log fixture: each imports to a session whose counts (person prompts,
 * turns, actions, results, subagent writers, compactions) are the source's, and verify is clean where the
 * source was (issue 10, item 1; mapping: docs/import.md).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importClaudeCodeTranscript } from '../../lib/importers/index.js';
import { verifySession } from '../../lib/log/analyse/verify.js';
import { decodeEvent, type LogEvent, readSegmentFile, sessionDirSources } from '../../lib/log/index.js';
import { tmpDirs } from '../support/tmp.js';

const CASES = 'test/fixtures/cases';
const scratch = tmpDirs('hansard-cc-cases-');

type Ev = LogEvent & Record<string, unknown>;

interface Imported {
  main: Ev[];
  /** every segment of the session, by writer id */
  writers: Map<string, Ev[]>;
  all: Ev[];
  mainW: string;
  dir: string;
}

async function importFile(file: string): Promise<Imported> {
  const out = scratch.make();
  const r = await importClaudeCodeTranscript(file, out);
  const writers = new Map<string, Ev[]>();
  for (const name of readdirSync(r.dir).filter((n) => n.endsWith('.jsonl'))) {
    const events: Ev[] = [];
    for await (const item of readSegmentFile(join(r.dir, name))) {
      if (item.kind === 'problem') throw new Error(`segment problem: ${item.problem.message}`);
      events.push(decodeEvent(item.event) as Ev);
    }
    writers.set(name.replace(/\.jsonl$/, ''), events);
  }
  return { main: writers.get(r.w)!, writers, all: [...writers.values()].flat(), mainW: r.w, dir: r.dir };
}

const ofType = (events: Ev[], type: string) => events.filter((e) => e.type === type);
const marked = (events: Ev[], kind: string) =>
  events.filter((e) => e.type === 'note' && (e.extra as Record<string, unknown>)?.import_kind === kind);

/** The counts the issue names, over the whole session. */
function counts(s: Imported) {
  return {
    prompts: ofType(s.all, 'message').length,
    turns: ofType(s.all, 'turn.start').length,
    actions: ofType(s.all, 'agent.action').length,
    results: ofType(s.all, 'agent.action_result').length,
    subagentWriters: s.writers.size - 1,
    compactions: marked(s.all, 'compaction').length,
  };
}

async function verifyCodes(s: Imported): Promise<string[]> {
  const r = await verifySession(sessionDirSources(s.dir));
  return r.problems.map((p) => p.code);
}

describe('01: a subagent (isSidechain) is not the person', () => {
  it('imports 1 prompt and 1 turn open until the final answer; the subagent in its own writer, linked to the Task call', async () => {
    const s = await importFile(`${CASES}/01-sidechain-subagent-prompt.jsonl`);
    expect(counts(s)).toEqual({
      prompts: 1,
      turns: 2,
      actions: 2,
      results: 2,
      subagentWriters: 1,
      compactions: 0,
    });
    // main writer: one prompt, one turn holding the Task call, its result and the final answer
    expect(ofType(s.main, 'message')).toHaveLength(1);
    expect(ofType(s.main, 'turn.start')).toHaveLength(1);
    const turn = ofType(s.main, 'turn.start')[0]!.turn_id;
    const task = ofType(s.main, 'agent.action')[0]!;
    expect(task).toMatchObject({ tool: 'Task', call_id: 'toolu_T1', turn_id: turn });
    expect(ofType(s.main, 'agent.action_result')[0]).toMatchObject({ action_id: task.id, status: 'ok' });
    const outputs = ofType(s.main, 'agent.output');
    expect(outputs.at(-1)).toMatchObject({ turn_id: turn });
    expect(String(outputs.at(-1)!.text)).toContain('src/net.ts:12');
    const end = ofType(s.main, 'turn.end');
    expect(end).toHaveLength(1);
    expect(s.main.indexOf(end[0]!)).toBeGreaterThan(s.main.indexOf(outputs.at(-1)!));
    // the subagent's writer: linked to the Task action, holding the Grep call, its result and its answer
    const [subW, sub] = [...s.writers].find(([w]) => w !== s.mainW)!;
    expect(sub[0]!.meta).toMatchObject({
      parent_action_id: task.id,
      parent_writer: s.mainW,
      subagent_id: 'ag01',
    });
    expect(ofType(sub, 'message')).toHaveLength(0);
    expect(marked(sub, 'subagent_prompt')).toHaveLength(1);
    const grep = ofType(sub, 'agent.action')[0]!;
    expect(grep).toMatchObject({ tool: 'Grep', call_id: 'toolu_G1' });
    expect(ofType(sub, 'agent.action_result')[0]).toMatchObject({ action_id: grep.id });
    expect(subW).not.toBe(s.mainW);
    // the subagent's turn ends when the Task result comes back, not when the import ends
    expect(ofType(sub, 'turn.end')).toMatchObject([
      { status: 'completed', ts: ofType(s.main, 'agent.action_result')[0]!.ts },
    ]);
    expect(await verifyCodes(s)).toEqual([]);
  });
});

describe('02: a compaction summary is not a prompt', () => {
  it('imports 2 prompts and 2 turns; the boundary and the summary that follows it are one compaction note', async () => {
    const s = await importFile(`${CASES}/02-compact-summary-as-prompt.jsonl`);
    expect(counts(s)).toEqual({
      prompts: 2,
      turns: 2,
      actions: 0,
      results: 0,
      subagentWriters: 0,
      compactions: 1,
    });
    expect(ofType(s.main, 'message').map((m) => m.text)).toEqual(['Refactor the parser', 'Now add tests']);
    const [note] = marked(s.main, 'compaction');
    // By the agent that compacted, as the hook's and Codex's compaction notes are (docs/import.md).
    expect(note).toMatchObject({ author: 'claude-code', ts: '2026-03-02T09:30:00.000000Z' });
    expect(String(note!.text)).toContain('This session is being continued');
    expect(note!.extra).toMatchObject({
      compactMetadata: { trigger: 'auto', preTokens: 150000 },
      compact_boundary: 'Conversation compacted',
    });
    expect(ofType(s.main, 'turn.end').map((e) => e.status)).toEqual(['completed', 'completed']);
    expect(await verifyCodes(s)).toEqual([]);
  });
});

describe('06: a result whose call is not in the file', () => {
  it('keeps its original tool_use_id as action_id, and verify reports it as dangling', async () => {
    const s = await importFile(`${CASES}/06-orphan-tool-result.jsonl`);
    expect(counts(s)).toEqual({
      prompts: 1,
      turns: 1,
      actions: 1,
      results: 2,
      subagentWriters: 0,
      compactions: 0,
    });
    const results = ofType(s.main, 'agent.action_result');
    expect(results[1]).toMatchObject({ action_id: 'toolu_SELFHEALED9', status: 'ok' });
    for (const r of results) expect(r.action_id).not.toBe('');
    expect(await verifyCodes(s)).toEqual(['dangling_reference']);
  });
});

describe('the real claude-code-log fixture', () => {
  it('imports 4 prompts, 4 turns, 2 actions, 2 results, no subagent, no compaction; verify clean', async () => {
    const s = await importFile('test/fixtures/real/ccl-representative_messages.jsonl');
    expect(counts(s)).toEqual({
      prompts: 4,
      turns: 4,
      actions: 2,
      results: 2,
      subagentWriters: 0,
      compactions: 0,
    });
    expect(marked(s.main, 'unknown_record')).toHaveLength(1); // the trailing `summary` line, kept exactly
    expect(await verifyCodes(s)).toEqual([]);
  });
});
