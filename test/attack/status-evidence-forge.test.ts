/**
 * Attacks on the declared-evidence verdicts (seed 000 "Read declared evidence": "A pass requires a
 * recorded zero exit code. A missing or conflicting result marks the claim Unsupported"; docs/status.md
 * "How claims are checked"), over real HTTP: a session whose transcript shows the claimed test or command
 * did NOT pass, and a report claiming it passed, which `GET …/status` should call unsupported.
 *
 * Each case found a fault and is skipped (`FAULT: …`) so the suite stays green; remove `.skip` to see it
 * fail. They fail on main at a3890f9.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

const srv = useServer({ tokens: { reader: ['read'], reporter: ['report'] } });

/** Ten minutes ago plus `s` seconds, in µs: the actions come before the report. */
const past = (s: number) => (Date.now() - 600_000 + s * 1000) * 1000;

interface Run {
  command: string;
  /** exit codes of the results recorded for it, in order (several: conflicting results) */
  exits: number[];
  /** the result's status; default ok for 0, error otherwise */
  status?: 'ok' | 'error';
}

/** Uploads one writer whose transcript runs `runs` in order; returns the session id. */
async function sessionWith(runs: Run[]): Promise<string> {
  mkdirSync(srv.workDir, { recursive: true });
  const w = openSession(mkdtempSync(join(srv.workDir, 'forge-')), { agent: 'coder' });
  const t = w.turnStart({ context_message_ids: [] }, { at: past(0) });
  runs.forEach((r, i) => {
    const a = w.action(
      { turn_id: t.turn_id, tool: 'Bash', input: { command: r.command } },
      { at: past(10 * i + 1) },
    );
    r.exits.forEach((exit, j) => {
      const status = r.status ?? (exit === 0 ? 'ok' : 'error');
      w.actionResult({ action_id: a.id, status, exit_code: exit }, { at: past(10 * i + 2 + j) });
    });
  });
  w.close();
  await upload(srv, srv.admin, readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path }));
  return w.sid;
}

/** Reports one claim on `sid` and reads back its check. */
async function checkOf(sid: string, claim: { type: string; ref: string; result: string }) {
  const p = await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
    token: srv.tokens.reporter,
    json: { state: 'needs_review', note: 'tests pass', events: [{ kind: 'evidence', evidence: [claim] }] },
  });
  expect(p.status, p.text).toBe(201);
  const g = await request(srv, 'GET', `/v1/sessions/${sid}/status`, { token: srv.tokens.reader });
  expect(g.status, g.text).toBe(200);
  return g.json.events[0].evidence[0].check as { verdict: string; reason: string; matched_by: string };
}

describe('forging a supported verdict', () => {
  it('holds: an exact command that exited 1 stays unsupported even after a later `cmd; exit 0`', async () => {
    const sid = await sessionWith([
      { command: 'npm run lint', exits: [1] },
      { command: 'npm run lint; exit 0', exits: [0] },
    ]);
    expect((await checkOf(sid, { type: 'command', ref: 'npm run lint', result: 'passed' })).verdict).toBe(
      'unsupported',
    );
  });

  // Was a FAULT (high): two results for one action, exit 1 then exit 0 (a second result appended by any writer
  // of the session, even after the report), make `passed` supported: the last result silently wins
  // (lib/log/analyse/evidence.ts EvidenceIndex.add overwrites a.result). The seed says a conflicting result marks
  // the claim unsupported.
  it('a claim on an action with conflicting results (exit 1, then exit 0) is unsupported', async () => {
    const sid = await sessionWith([{ command: 'npm test', exits: [1, 0] }]);
    const c = await checkOf(sid, { type: 'test', ref: 'npm test', result: 'passed' });
    expect(c.verdict).toBe('unsupported');
  });

  // Was a FAULT (high): a one-word test ref matches any command holding that word (rule 4, `command_word`), and
  // among equal matches the last counts: the real run `npx vitest run parser-unit` exited 1, then
  // `echo parser-unit` exited 0, and "parser-unit passed" is supported by the echo.
  it('a failing test run is not made supported by a later command that merely names the test', async () => {
    const sid = await sessionWith([
      { command: 'npx vitest run parser-unit', exits: [1] },
      { command: 'echo parser-unit', exits: [0] },
    ]);
    const c = await checkOf(sid, { type: 'test', ref: 'parser-unit', result: 'passed' });
    expect(c.verdict).toBe('unsupported');
  });

  // Was a FAULT (medium): the prefix rule (`command_prefix`) takes a command whose exit code is not the ref's:
  // `npm test || true` exits 0 whatever the tests did, and supports "npm test passed".
  it('`npm test || true` does not support "npm test passed"', async () => {
    const sid = await sessionWith([{ command: 'npm test || true', exits: [0] }]);
    const c = await checkOf(sid, { type: 'test', ref: 'npm test', result: 'passed' });
    expect(c.verdict).toBe('unsupported');
  });

  // Was a FAULT (medium): a one-word ref is a prefix of every command of that program: "test npm passed" is
  // supported by `npm --version` after `npm test` exited 1.
  it('a one-word ref is not supported by an unrelated command of the same program', async () => {
    const sid = await sessionWith([
      { command: 'npm test', exits: [1] },
      { command: 'npm --version', exits: [0] },
    ]);
    const c = await checkOf(sid, { type: 'test', ref: 'npm', result: 'passed' });
    expect(c.verdict).toBe('unsupported');
  });

  // Was a FAULT (low): a result with status `error` and exit code 0 supports `passed` (only the exit code is
  // read); status and exit code conflict, which the seed calls unsupported.
  it('a result recorded as an error with exit code 0 does not support "passed"', async () => {
    const sid = await sessionWith([{ command: 'make check', exits: [0], status: 'error' }]);
    const c = await checkOf(sid, { type: 'command', ref: 'make check', result: 'passed' });
    expect(c.verdict).toBe('unsupported');
  });
});
