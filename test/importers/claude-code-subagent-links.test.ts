/**
 * The Claude Code transcript importer links a subagent to the Task/Agent call that launched it by what
 * identifies the two, never by the order their records arrive in (issue 25 item 3; docs/import.md
 * "Which call launched a subagent"): the id the call's result names (`toolUseResult.agentId`, the
 * result's `agentId: …` line, an `agent_progress` record), the subagent's first prompt against the call's
 * `prompt`; a subagent nothing ties is a writer marked unlinked and takes no call's link. The records
 * are shaped as Claude Code writes them (test/fixtures/cases/01; the shapes public parsers of its
 * transcripts document: `toolUseResult`, `agent-<id>.jsonl`, `.meta.json`).
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importClaudeCodeTranscript } from '../../lib/importers/index.js';
import { verifySession } from '../../lib/log/analyse/verify.js';
import { decodeEvent, type LogEvent, readSegmentFile, sessionDirSources } from '../../lib/log/index.js';
import { runHansard } from '../support/cli.js';
import { tmpDirs } from '../support/tmp.js';

const scratch = tmpDirs('hansard-cc-links-');
type Ev = LogEvent & Record<string, unknown>;
type Rec = Record<string, unknown>;

const SESSION = '7a1c2e90-5b1d-4c3e-9f10-2b3c4d5e6f70';

/** Builds records the way Claude Code 2.x writes them: one content block a line, uuid-chained. */
class Transcript {
  private clock = Date.parse('2026-03-01T10:00:00.000Z');
  private n = 0;
  private last = new Map<string, string | null>();

  record(type: string, more: Rec, agentId: string | null = null): Rec {
    this.clock += 1000;
    this.n += 1;
    const chain = agentId ?? '';
    const uuid = `${agentId ?? 'm'}-${this.n}`;
    const r: Rec = {
      parentUuid: this.last.get(chain) ?? null,
      isSidechain: agentId !== null,
      userType: 'external',
      cwd: '/home/user/proj',
      sessionId: SESSION,
      version: '2.1.30',
      gitBranch: 'main',
      ...(agentId !== null ? { agentId } : {}),
      type,
      uuid,
      timestamp: new Date(this.clock).toISOString(),
      ...more,
    };
    this.last.set(chain, uuid);
    return r;
  }

  prompt(text: string): Rec {
    return this.record('user', { message: { role: 'user', content: text } });
  }

  /** The main agent's Task (or Agent) call. */
  call(
    id: string,
    input: { subagent_type?: string; description: string; prompt: string },
    name = 'Task',
  ): Rec {
    return this.record('assistant', {
      message: {
        id: `msg_${id}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-test',
        content: [{ type: 'tool_use', id, name, input }],
        stop_reason: 'tool_use',
      },
    });
  }

  /** A subagent's run: its prompt, a Grep call and its result, what `middle` adds, its answer. */
  run(agentId: string, prompt: string, answer: string, middle: () => Rec[] = () => []): Rec[] {
    const grep = `toolu_grep_${agentId}`;
    return [
      this.record('user', { message: { role: 'user', content: prompt } }, agentId),
      this.record(
        'assistant',
        {
          message: {
            role: 'assistant',
            content: [{ type: 'tool_use', id: grep, name: 'Grep', input: { pattern: agentId } }],
            stop_reason: 'tool_use',
          },
        },
        agentId,
      ),
      this.record(
        'user',
        {
          message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: grep, content: 'x.ts:1' }] },
        },
        agentId,
      ),
      ...middle(),
      this.record(
        'assistant',
        {
          message: { role: 'assistant', content: [{ type: 'text', text: answer }], stop_reason: 'end_turn' },
        },
        agentId,
      ),
    ];
  }

  /**
   * The Task call's result. `agentId`: the id `toolUseResult` names (null: an older release's result,
   * which names none); `async`: a background launch's result (`async_launched`).
   */
  result(
    callId: string,
    text: string,
    agentId: string | null,
    opts: { async?: boolean; line?: boolean } = {},
  ): Rec {
    const content = [{ type: 'text', text }];
    if (opts.line && agentId)
      content.push({
        type: 'text',
        text: `agentId: ${agentId} (for resuming to continue this agent's work if needed)`,
      });
    const toolUseResult: Rec = opts.async
      ? {
          isAsync: true,
          status: 'async_launched',
          agentId,
          description: 'background',
          outputFile: '/tmp/out',
        }
      : {
          status: 'completed',
          ...(agentId && !opts.line ? { agentId } : {}),
          content: [{ type: 'text', text }],
          totalDurationMs: 5000,
          totalTokens: 1200,
          totalToolUseCount: 1,
        };
    return this.record('user', {
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: callId, content }] },
      toolUseResult,
    });
  }

  answer(text: string): Rec {
    return this.record('assistant', {
      message: { role: 'assistant', content: [{ type: 'text', text }], stop_reason: 'end_turn' },
    });
  }
}

const jsonl = (records: Rec[]) => `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;

interface Imported {
  main: Ev[];
  mainW: string;
  /** the subagent writers: subagent id → its events */
  subs: Map<string, Ev[]>;
  dir: string;
  codes: string[];
}

async function readSegments(dir: string): Promise<Map<string, Ev[]>> {
  const writers = new Map<string, Ev[]>();
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.jsonl'))) {
    const events: Ev[] = [];
    for await (const item of readSegmentFile(join(dir, name))) {
      if (item.kind === 'problem') throw new Error(`segment problem: ${item.problem.message}`);
      events.push(decodeEvent(item.event) as Ev);
    }
    writers.set(name.replace(/\.jsonl$/, ''), events);
  }
  return writers;
}

async function imported(dir: string, mainW: string): Promise<Imported> {
  const writers = await readSegments(dir);
  const subs = new Map<string, Ev[]>();
  for (const [w, events] of writers)
    if (w !== mainW) subs.set(String((events[0]!.meta as Rec).subagent_id), events);
  const report = await verifySession(sessionDirSources(dir));
  return { main: writers.get(mainW)!, mainW, subs, dir, codes: report.problems.map((p) => p.code) };
}

/** Imports `records` as one transcript through the importer. */
async function importRecords(records: Rec[]): Promise<Imported> {
  const dir = scratch.make();
  const file = join(dir, `${SESSION}.jsonl`);
  writeFileSync(file, jsonl(records));
  const r = await importClaudeCodeTranscript(file, join(dir, 'out'));
  return imported(r.dir, r.w);
}

const ofType = (events: Ev[], type: string) => events.filter((e) => e.type === type);
const unlinkedNotes = (events: Ev[]) =>
  events.filter((e) => e.type === 'note' && (e.extra as Rec | undefined)?.unlinked_subagent === true);
/** The action id of the main writer's call `callId`. */
const actionOf = (s: Imported, callId: string) =>
  ofType(s.main, 'agent.action').find((a) => a.call_id === callId)!.id;
/** subagent id → the parent action its writer names, as the call id of that action (null: none). */
function links(s: Imported, actions: Ev[] = s.main): Record<string, string | null> {
  const callOf = new Map(ofType(actions, 'agent.action').map((a) => [a.id, a.call_id as string]));
  const out: Record<string, string | null> = {};
  for (const [id, events] of s.subs) {
    const parent = (events[0]!.meta as Rec).parent_action_id as string | null;
    out[id] = parent === null ? null : (callOf.get(parent) ?? `unknown action ${parent}`);
  }
  return out;
}

const AUTH = {
  subagent_type: 'Explore',
  description: 'find auth',
  prompt: 'Find where sessions are authenticated',
};
const DB = {
  subagent_type: 'Explore',
  description: 'find db',
  prompt: 'Find where the database pool is opened',
};

describe('two subagents whose records do not follow the order of their calls', () => {
  it.each([
    ['in the order of their calls', false],
    ['in the other order', true],
  ])('each links to its own call when their records arrive %s', async (_, reverse) => {
    const t = new Transcript();
    const head = [
      t.prompt('where are auth and the db pool?'),
      t.call('toolu_T1', AUTH),
      t.call('toolu_T2', DB),
    ];
    const runs = [t.run('a1', AUTH.prompt, 'auth: src/auth.ts'), t.run('a2', DB.prompt, 'db: src/db.ts')];
    if (reverse) runs.reverse();
    const s = await importRecords([
      ...head,
      ...runs.flat(),
      t.result('toolu_T1', 'auth: src/auth.ts', 'a1'),
      t.result('toolu_T2', 'db: src/db.ts', 'a2'),
      t.answer('auth in src/auth.ts, pool in src/db.ts'),
    ]);
    expect(links(s)).toEqual({ a1: 'toolu_T1', a2: 'toolu_T2' });
    expect([...s.subs.values()].flatMap(unlinkedNotes)).toEqual([]);
    // each subagent's turn ends at its own call's result
    const resultTs = (callId: string) =>
      ofType(s.main, 'agent.action_result').find((r) => r.action_id === actionOf(s, callId))!.ts;
    expect(ofType(s.subs.get('a1')!, 'turn.end').map((e) => e.ts)).toEqual([resultTs('toolu_T1')]);
    expect(ofType(s.subs.get('a2')!, 'turn.end').map((e) => e.ts)).toEqual([resultTs('toolu_T2')]);
    expect(s.codes).toEqual([]);
  });

  it('background subagents (results before their records) link by the id their launch result names', async () => {
    const t = new Transcript();
    const s = await importRecords([
      t.prompt('look at auth and the db pool in the background'),
      t.call('toolu_T1', AUTH),
      t.result('toolu_T1', 'Async agent launched successfully.', 'a1', { async: true }),
      t.call('toolu_T2', DB),
      t.result('toolu_T2', 'Async agent launched successfully.', 'a2', { async: true }),
      ...t.run('a2', DB.prompt, 'db: src/db.ts'),
      ...t.run('a1', AUTH.prompt, 'auth: src/auth.ts'),
      t.answer('both launched'),
    ]);
    expect(links(s)).toEqual({ a1: 'toolu_T1', a2: 'toolu_T2' });
    expect(s.codes).toEqual([]);
  });

  it("the result's `agentId: …` line ties too (no toolUseResult id)", async () => {
    const t = new Transcript();
    const s = await importRecords([
      t.prompt('where are auth and the db pool?'),
      t.call('toolu_T1', { ...AUTH, prompt: 'search' }, 'Agent'),
      t.call('toolu_T2', { ...DB, prompt: 'search' }, 'Agent'),
      ...t.run('a1', 'search', 'auth: src/auth.ts'),
      ...t.run('a2', 'search', 'db: src/db.ts'),
      t.result('toolu_T2', 'db: src/db.ts', 'a2', { line: true }),
      t.result('toolu_T1', 'auth: src/auth.ts', 'a1', { line: true }),
    ]);
    expect(links(s)).toEqual({ a1: 'toolu_T1', a2: 'toolu_T2' });
  });
});

describe('a subagent nothing ties to a call', () => {
  it('with an id no call names, arriving between two calls, is unlinked and takes no call’s link', async () => {
    const t = new Transcript();
    const s = await importRecords([
      t.prompt('where are auth and the db pool?'),
      t.call('toolu_T1', AUTH),
      ...t.run('stray', 'Summarise the changelog', 'nothing to summarise'),
      t.call('toolu_T2', DB),
      ...t.run('a1', AUTH.prompt, 'auth: src/auth.ts'),
      ...t.run('a2', DB.prompt, 'db: src/db.ts'),
      t.result('toolu_T1', 'auth: src/auth.ts', 'a1'),
      t.result('toolu_T2', 'db: src/db.ts', 'a2'),
      t.answer('done'),
    ]);
    expect(links(s)).toEqual({ stray: null, a1: 'toolu_T1', a2: 'toolu_T2' });
    const [note, ...more] = unlinkedNotes(s.subs.get('stray')!);
    expect(more).toEqual([]);
    expect(note).toMatchObject({
      author: 'hansard-import',
      extra: { import_kind: 'meta', unlinked_subagent: true },
    });
    expect(String(note!.text)).toContain('stray');
    expect(unlinkedNotes(s.subs.get('a1')!)).toEqual([]);
    expect(s.codes).toEqual([]);
  });

  it('hansard import claude-code says how many subagent writers are linked to no call', async () => {
    const t = new Transcript();
    const dir = scratch.make();
    const file = join(dir, `${SESSION}.jsonl`);
    writeFileSync(
      file,
      jsonl([
        t.prompt('where is auth?'),
        t.call('toolu_T1', AUTH),
        ...t.run('stray', 'Summarise the changelog', 'nothing to summarise'),
        ...t.run('a1', AUTH.prompt, 'auth: src/auth.ts'),
        t.result('toolu_T1', 'auth: src/auth.ts', 'a1'),
      ]),
    );
    const r = await runHansard(['import', 'claude-code', file, '--out', 'sessions'], { cwd: dir, env: {} });
    expect(r.code).toBe(0);
    expect(r.err).toContain(', 2 subagent writers (1 linked to no call)');
  });

  it('when results name no ids (an older release), the prompt ties and the stray one stays unlinked', async () => {
    const t = new Transcript();
    const s = await importRecords([
      t.prompt('where are auth and the db pool?'),
      t.call('toolu_T1', AUTH),
      ...t.run('stray', 'Summarise the changelog', 'nothing to summarise'),
      t.call('toolu_T2', DB),
      ...t.run('a1', AUTH.prompt, 'auth: src/auth.ts'),
      ...t.run('a2', DB.prompt, 'db: src/db.ts'),
      t.result('toolu_T1', 'auth: src/auth.ts', null),
      t.result('toolu_T2', 'db: src/db.ts', null),
    ]);
    expect(links(s)).toEqual({ stray: null, a1: 'toolu_T1', a2: 'toolu_T2' });
  });

  it('a call whose result names another subagent is left to it, even when that subagent is not in the file', async () => {
    const t = new Transcript();
    const s = await importRecords([
      t.prompt('where is auth?'),
      t.call('toolu_T1', AUTH),
      ...t.run('other', AUTH.prompt, 'auth: src/auth.ts'),
      t.result('toolu_T1', 'auth: src/auth.ts', 'a1'),
    ]);
    expect(links(s)).toEqual({ other: null });
  });
});

describe('parallel Task calls of the same type', () => {
  it('with different descriptions, each subagent links to the call whose prompt it was given', async () => {
    const t = new Transcript();
    const s = await importRecords([
      t.prompt('where are auth and the db pool?'),
      t.call('toolu_T1', AUTH),
      t.call('toolu_T2', DB),
      ...t.run('a1', AUTH.prompt, 'auth: src/auth.ts'),
      ...t.run('a2', DB.prompt, 'db: src/db.ts'),
      t.result('toolu_T1', 'auth: src/auth.ts', null),
      t.result('toolu_T2', 'db: src/db.ts', null),
      t.answer('auth in src/auth.ts, pool in src/db.ts'),
    ]);
    expect(links(s)).toEqual({ a1: 'toolu_T1', a2: 'toolu_T2' });
    expect(s.codes).toEqual([]);
  });
});

describe('subagent transcripts in their own files', () => {
  /** A session file and its subagents' files as Claude Code 2.1 lays them out. */
  function layout(legacy: boolean): { dir: string; file: string } {
    const t = new Transcript();
    const dir = scratch.make();
    const file = join(dir, `${SESSION}.jsonl`);
    const nested = {
      subagent_type: 'general-purpose',
      description: 'check tests',
      prompt: 'Run the auth tests',
    };
    const head = [
      t.prompt('where are auth and the db pool?'),
      t.call('toolu_T1', AUTH),
      t.call('toolu_T2', DB),
    ];
    // a1 launches a subagent of its own (a9) through its own Task call
    let a9: Rec[] = [];
    const a1 = t.run('a1', AUTH.prompt, 'auth: src/auth.ts', () => {
      const call = t.record(
        'assistant',
        {
          message: {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'toolu_T9', name: 'Task', input: nested }],
            stop_reason: 'tool_use',
          },
        },
        'a1',
      );
      a9 = t.run('a9', nested.prompt, 'tests pass');
      const result = t.record(
        'user',
        {
          message: {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'toolu_T9', content: 'tests pass' }],
          },
          toolUseResult: {
            status: 'completed',
            agentId: 'a9',
            content: [{ type: 'text', text: 'tests pass' }],
          },
        },
        'a1',
      );
      return [call, result];
    });
    const a2 = t.run('a2', DB.prompt, 'db: src/db.ts');
    writeFileSync(
      file,
      jsonl([
        ...head,
        t.result('toolu_T2', 'db: src/db.ts', 'a2'),
        t.result('toolu_T1', 'auth: src/auth.ts', 'a1'),
        t.answer('auth in src/auth.ts, pool in src/db.ts'),
      ]),
    );
    const side = legacy ? dir : join(dir, SESSION, 'subagents');
    mkdirSync(side, { recursive: true });
    writeFileSync(join(side, 'agent-a1.jsonl'), jsonl(a1));
    writeFileSync(join(side, 'agent-a2.jsonl'), jsonl(a2));
    writeFileSync(join(side, 'agent-a9.jsonl'), jsonl(a9));
    if (!legacy) {
      writeFileSync(
        join(side, 'agent-a1.meta.json'),
        JSON.stringify({ agentType: 'Explore', spawnDepth: 1 }),
      );
      writeFileSync(
        join(side, 'agent-a9.meta.json'),
        JSON.stringify({ agentType: 'general-purpose', spawnDepth: 2 }),
      );
    }
    return { dir, file };
  }

  it.each([
    ['<session>/subagents/agent-<id>.jsonl (Claude Code 2.1.2 and later)', false],
    ['agent-<id>.jsonl beside the session file (earlier releases)', true],
  ])('are read from %s and linked by their id, a nested one to its own call', async (_, legacy) => {
    const { dir, file } = layout(legacy);
    const r = await runHansard(['import', 'claude-code', file, '--out', 'sessions', '--json'], {
      cwd: dir,
      env: {},
    });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out) as { dir: string; w: string; counts: Rec };
    expect(out.counts).toMatchObject({ subagentWriters: 3 });
    const s = await imported(out.dir, out.w);
    expect(links(s)).toMatchObject({ a1: 'toolu_T1', a2: 'toolu_T2' });
    // a9 was launched by a1's Task call: its parent writer is a1's, its parent action a1's call
    const a1 = s.subs.get('a1')!;
    const a9Meta = s.subs.get('a9')![0]!.meta as Rec;
    expect(a9Meta.parent_writer).toBe(a1[0]!.w);
    expect(a9Meta.parent_action_id).toBe(
      ofType(a1, 'agent.action').find((a) => a.call_id === 'toolu_T9')!.id,
    );
    // the subagents' own records are in their writers, in their own time
    expect(ofType(s.subs.get('a2')!, 'agent.output').map((e) => e.text)).toEqual(['db: src/db.ts']);
    expect([...s.subs.values()].flatMap(unlinkedNotes)).toEqual([]);
    expect(s.codes).toEqual([]);
  });
});

describe('what a subagent file adds', () => {
  it('its .meta.json type ties it when nothing else does; a record the transcript holds too is imported once', async () => {
    const t = new Transcript();
    const dir = scratch.make();
    const file = join(dir, `${SESSION}.jsonl`);
    const head = [
      t.prompt('plan the auth change, then explore the db'),
      t.call('toolu_T1', { subagent_type: 'Plan', description: 'plan auth', prompt: 'Plan the auth change' }),
      t.call('toolu_T2', { subagent_type: 'Explore', description: 'explore db', prompt: 'Explore the db' }),
    ];
    // the subagents were given their prompts with more around them: only their type ties them
    const explorer = t.run('a2', 'Context: repo proj.\nExplore the db', 'db: src/db.ts');
    const planner = t.run('a1', 'Context: repo proj.\nPlan the auth change', 'plan: 3 steps');
    const tail = [
      t.result('toolu_T1', 'plan: 3 steps', null),
      t.result('toolu_T2', 'db: src/db.ts', null),
      t.answer('done'),
    ];
    // the transcript holds a2's records inline as well as in its file
    writeFileSync(file, jsonl([...head, ...explorer, ...tail]));
    const side = join(dir, SESSION, 'subagents');
    mkdirSync(side, { recursive: true });
    writeFileSync(join(side, 'agent-a1.jsonl'), jsonl(planner));
    writeFileSync(join(side, 'agent-a1.meta.json'), JSON.stringify({ agentType: 'Plan', spawnDepth: 1 }));
    writeFileSync(join(side, 'agent-a2.jsonl'), jsonl(explorer));
    writeFileSync(join(side, 'agent-a2.meta.json'), JSON.stringify({ agentType: 'Explore', spawnDepth: 1 }));
    const r = await importClaudeCodeTranscript(file, join(dir, 'out'));
    const s = await imported(r.dir, r.w);
    expect(links(s)).toEqual({ a1: 'toolu_T1', a2: 'toolu_T2' });
    expect(ofType(s.subs.get('a2')!, 'agent.action')).toHaveLength(1);
    expect(ofType(s.subs.get('a2')!, 'agent.output').map((e) => e.text)).toEqual(['db: src/db.ts']);
    expect(s.codes).toEqual([]);
  });
});

describe('sidechains of an older release, which name no agentId', () => {
  const strip = (records: Rec[]) => records.map(({ agentId: _, ...r }) => r);

  it('are told apart by their parentUuid chains, each linked to the call given its prompt', async () => {
    const t = new Transcript();
    const head = [
      t.prompt('where are auth and the db pool?'),
      t.call('toolu_T1', AUTH),
      t.call('toolu_T2', DB),
    ];
    const a1 = strip(t.run('x1', AUTH.prompt, 'auth: src/auth.ts'));
    const a2 = strip(t.run('x2', DB.prompt, 'db: src/db.ts'));
    // interleaved, as parallel subagents write
    const mixed = a1.flatMap((r, i) => [r, a2[i]!]);
    const s = await importRecords([
      ...head,
      ...mixed,
      t.result('toolu_T1', 'auth: src/auth.ts', null),
      t.result('toolu_T2', 'db: src/db.ts', null),
    ]);
    const byRoot = links(s);
    expect(Object.values(byRoot).sort()).toEqual(['toolu_T1', 'toolu_T2']);
    const outputsOf = (callId: string) =>
      [...s.subs.values()]
        .filter((ev) => (ev[0]!.meta as Rec).parent_action_id === actionOf(s, callId))
        .flatMap((ev) => ofType(ev, 'agent.output').map((e) => e.text));
    expect(outputsOf('toolu_T1')).toEqual(['auth: src/auth.ts']);
    expect(outputsOf('toolu_T2')).toEqual(['db: src/db.ts']);
    expect(s.codes).toEqual([]);
  });

  it("whose first record's parentUuid is the record of its call are linked to that call", async () => {
    const t = new Transcript();
    const c1 = t.call('toolu_T1', { ...AUTH, prompt: 'search' });
    const c2 = t.call('toolu_T2', { ...DB, prompt: 'search' });
    const a2 = strip(t.run('x2', 'search', 'db: src/db.ts'));
    const a1 = strip(t.run('x1', 'search', 'auth: src/auth.ts'));
    a2[0]!.parentUuid = c2.uuid;
    a1[0]!.parentUuid = c1.uuid;
    const s = await importRecords([
      t.prompt('where are auth and the db pool?'),
      c1,
      c2,
      ...a2,
      ...a1,
      t.result('toolu_T1', 'auth: src/auth.ts', null),
      t.result('toolu_T2', 'db: src/db.ts', null),
    ]);
    const outputsOf = (callId: string) =>
      [...s.subs.values()]
        .filter((ev) => (ev[0]!.meta as Rec).parent_action_id === actionOf(s, callId))
        .flatMap((ev) => ofType(ev, 'agent.output').map((e) => e.text));
    expect(outputsOf('toolu_T1')).toEqual(['auth: src/auth.ts']);
    expect(outputsOf('toolu_T2')).toEqual(['db: src/db.ts']);
  });
});
