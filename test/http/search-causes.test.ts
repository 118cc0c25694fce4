/**
 * `person:` finds agents' work the way importers record it (issue 30 item 2), over real HTTP on loopback
 * with the local stores (SQLite FTS5, its queue drained by hand): the Claude Code and Codex importers
 * write `caused_by: null` on an agent's events and the person's message ids in the turn's `turn.start`
 * (`context_message_ids`), the message itself in the person's own writer. The agent's action and output
 * are then the person's (replay's recorded attribution: lib/log/replay/attribution.ts, base 3), whichever
 * writer is uploaded and indexed first; an event recorded as caused by nothing (`caused_by: []`) is not.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tenants: ['acme'], tokens: { reader: ['read'] } });

type Writer = ReturnType<typeof openSession>;

function newWriter(agent: string, sid?: string): Writer {
  mkdirSync(srv.workDir, { recursive: true });
  return openSession(mkdtempSync(join(srv.workDir, 'causes-')), { agent, ...(sid ? { sid } : {}) });
}

/** Uploads all the writer wrote as one chunk, then drains the indexing queue. */
async function uploadAndIndex(s: Writer): Promise<void> {
  const r = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`, {
    token: srv.tenants.acme.admin,
    body: readFileSync(s.path),
  });
  expect(r.status, r.text).toBe(201);
  expect(await srv.indexNow()).toBeGreaterThanOrEqual(1);
}

/** The (type, id) of the hits of `q` in session `sid`, sorted. */
async function hitsOf(q: string, sid: string): Promise<string[]> {
  const r = await request(srv, 'GET', `/v1/search?q=${encodeURIComponent(`${q} session:${sid}`)}`, {
    token: srv.tokens.reader,
  });
  expect(r.status, r.text).toBe(200);
  return (r.json.hits as Array<{ type: string; id: string }>).map((h) => `${h.type} ${h.id}`).sort();
}

/**
 * A session as an importer writes it: Priya's message in the terminal's writer, and in the agent's a turn
 * whose start names it, an action and an output with `caused_by` null, and an output recorded as caused
 * by nothing.
 */
function importedSession() {
  const person = newWriter('terminal');
  const m = person.message({ user_id: 'priya', text: 'Please rotate the staging keys' });
  const agent = newWriter('claude-code', person.sid);
  const t = agent.turnStart({ context_message_ids: [m.id] });
  const a = agent.action({ turn_id: t.id, tool: 'Bash', input: { command: 'rotate-keys --env staging' } });
  agent.actionResult({ action_id: a.id, status: 'ok', output: 'rotated' });
  const o = agent.output({ turn_id: t.id, text: 'The staging keys are rotated.' });
  const idle = agent.output({ turn_id: t.id, text: 'Nothing else was asked of me.', caused_by: [] });
  agent.turnEnd({ turn_id: t.id, status: 'completed' });
  const theirs = [`message ${m.id}`, `action ${a.id}`, `output ${o.id}`].sort();
  return { person, agent, theirs, idle: `output ${idle.id}` };
}

describe("person: finds the agent's work of a turn begun by the person's message (caused_by null)", () => {
  it("with the person's writer indexed before the agent's", async () => {
    const s = importedSession();
    await uploadAndIndex(s.person);
    await uploadAndIndex(s.agent);
    expect(await hitsOf('person:priya', s.person.sid)).toEqual(s.theirs);
    expect(await hitsOf('staging person:priya', s.person.sid)).toEqual(s.theirs);
    expect(await hitsOf('person:priya type:action', s.person.sid)).toEqual(
      s.theirs.filter((h) => h.startsWith('action')),
    );
    // recorded as caused by nothing: found by its words, not as Priya's
    expect(await hitsOf('asked', s.person.sid)).toEqual([s.idle]);
    expect(await hitsOf('asked person:priya', s.person.sid)).toEqual([]);
  });

  it("with the agent's writer (the turn's start and its events) indexed before the person's message", async () => {
    const s = importedSession();
    await uploadAndIndex(s.agent);
    // the message is not indexed yet: nothing is Priya's
    expect(await hitsOf('person:priya', s.person.sid)).toEqual([]);
    await uploadAndIndex(s.person);
    expect(await hitsOf('person:priya', s.person.sid)).toEqual(s.theirs);
    expect(await hitsOf('asked person:priya', s.person.sid)).toEqual([]);
    expect(await hitsOf('person:someone-else', s.person.sid)).toEqual([]);
  });
});
