/**
 * What one overview row says at a glance (issue 14.1, found by a newcomer): the title is the link to the
 * session (the id beneath it is part of the same link), agents and people are told apart, an unsupported
 * declared claim stands out instead of sitting in muted text, and a blocked row says since when once
 * (beside the reason), not in the badge as well. Over real HTTP with the board cookie.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

const srv = useServer({ tokens: { board: ['board'], report: ['report'] } });
let sid = '';

const rowOf = (html: string) => html.match(new RegExp(`<tr data-sid="${sid}">[\\s\\S]*?</tr>`))?.[0] ?? '';
const board = async () =>
  rowOf((await request(srv, 'GET', '/', { headers: { cookie: `hansard_board=${srv.tokens.board}` } })).text);

async function report(body: object): Promise<void> {
  const res = await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
    token: srv.tokens.report,
    json: body,
  });
  expect(res.status, res.text).toBe(201);
}

beforeAll(async () => {
  const w = openSession(srv.workDir, { agent: 'claude-code' });
  w.participantJoin({ user_id: 'priya', display_name: null });
  const m = w.message({ user_id: 'priya', text: 'Fix the flaky checkout test' });
  const t = w.turnStart({ context_message_ids: [m.id] });
  const a = w.action({ turn_id: t.id, tool: 'Bash', input: { command: 'npm test' } });
  w.actionResult({ action_id: a.id, status: 'error', output: '1 failed', exit_code: 1 });
  w.turnEnd({ turn_id: t.id, status: 'completed' });
  w.end();
  sid = w.sid;
  await upload(srv, srv.tenant.admin, readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path }));
});

describe('an overview row', () => {
  it('links the title to the session, the id inside the same link, and labels agents and people', async () => {
    const row = await board();
    expect(row).toMatch(
      new RegExp(
        `<a class="row-link" href="/sessions/${sid}"><span class="row-title">Fix the flaky checkout test</span><small class="mono">${sid}</small></a>`,
      ),
    );
    expect(row).toContain(
      '<ul class="who who-agents" aria-label="agents"><li><a href="/agents/claude-code">',
    );
    expect(row).toContain('<ul class="who who-people" aria-label="people"><li><a href="/people/priya">');
  });

  it('makes an unsupported claim stand out, and a blocked row says since when once', async () => {
    await report({
      state: 'blocked',
      note: 'the checkout test needs a fixture from QA',
      events: [{ kind: 'evidence', evidence: [{ type: 'test', ref: 'npm test', result: 'passed' }] }],
    });
    const row = await board();
    // The recorded `npm test` exited 1: the claim that it passed is unsupported.
    expect(row).toContain('<strong class="unsupported">1 unsupported</strong>');
    expect(row).toContain('<span class="state blocked">blocked</span>');
    expect(row.match(/since/gi)?.length).toBe(1);
    expect(row).toContain('Blocked since');
  });
});
