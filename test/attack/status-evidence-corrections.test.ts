/**
 * Declared evidence against a transcript with corrections (seed 001 "Corrections are appended, never
 * rewritten"; lib/log/replay/corrections.ts: a correction changes a field in the effective view that replay,
 * text replay and inspect show). Over real HTTP: a command recorded `exit 0`, then corrected by its writer
 * to `exit 2` ("lint actually failed"), and a report claiming it passed.
 *
 * The case found a fault and is skipped (`FAULT: …`) so the suite stays green; remove `.skip` to see it
 * fail (it fails on main at e25f11b).
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

describe('declared evidence and corrections', () => {
  // Was a FAULT (medium): the evidence check reads the raw merged events (lib/service/status/get.ts evidenceIndex
  // uses mergeSegmentBatches, no CorrectionIndex), so a correction is ignored: the text replay shows
  // "action_result … error exit 2 [corrected: …]" and, rows below, "npm run lint passed: supported". (The
  // other way round, a correction to exit 0 leaves "passed" unsupported while the replay shows exit 0.)
  it('a pass whose result a correction changed to exit 2 is not supported', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const w = openSession(mkdtempSync(join(srv.workDir, 'corr-')), { agent: 'coder' });
    const t = w.turnStart({ context_message_ids: [] }, { at: past(0) });
    const a = w.action(
      { turn_id: t.turn_id, tool: 'Bash', input: { command: 'npm run lint' } },
      { at: past(1) },
    );
    const r = w.actionResult({ action_id: a.id, status: 'ok', exit_code: 0 }, { at: past(2) });
    w.correct(
      { target_id: r.id, field: 'exit_code', value: 2, reason: 'lint actually failed' },
      { at: past(3) },
    );
    w.correct(
      { target_id: r.id, field: 'status', value: 'error', reason: 'lint actually failed' },
      { at: past(3) },
    );
    w.close();
    await upload(srv, srv.admin, readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path }));
    const claim = { type: 'command', ref: 'npm run lint', result: 'passed' };
    const p = await request(srv, 'POST', `/v1/sessions/${w.sid}/status`, {
      token: srv.tokens.reporter,
      json: { state: 'done', note: 'lint clean', events: [{ kind: 'evidence', evidence: [claim] }] },
    });
    expect(p.status, p.text).toBe(201);
    const text = await request(srv, 'GET', `/v1/sessions/${w.sid}/replay?format=text`, {
      token: srv.tokens.reader,
    });
    expect(text.text).toMatch(/agent\.action_result .* error exit 2/);
    const s = await request(srv, 'GET', `/v1/sessions/${w.sid}/status`, { token: srv.tokens.reader });
    expect(s.json.events[0].evidence[0].check.verdict).toBe('unsupported');
  });
});
