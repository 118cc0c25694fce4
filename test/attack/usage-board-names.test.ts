/**
 * Attack on cost on the board (issue 27 item 3, lib/board/usage-parts.tsx, overview.tsx, timeline-rows.tsx):
 * usage notes whose model, person and agent are markup, and whose figures are the largest the counting
 * rules accept (10^12 tokens a record) next to ones they refuse, uploaded over real HTTP to the real
 * SQLite store; the board's overview, person, agent and session pages read back with the board's cookie
 * must answer 200 with every name escaped (no element or attribute an attacker wrote) and the figures
 * finite, and the overview API must agree with the session's usage.
 */
import { describe, expect, it } from 'vitest';
import { newId, openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

const srv = useServer({ tokens: { board: ['board'] } });

const MODEL = 'claude-<script>window.pwned=1</script>';
const PERSON = 'eve"><img src=x onerror=alert(1)>';
const AGENT = "agent'><svg onload=alert(2)>";
/** What an attacker would need to appear raw for markup to run. */
const RAW = ['<script>window.pwned', '<img src=x', '<svg onload'];

const page = async (path: string) => {
  const res = await request(srv, 'GET', path, { headers: { cookie: `hansard_board=${srv.tokens.board}` } });
  return res;
};

describe('hostile names and figures on the board', () => {
  let sid = '';

  it('a session whose usage notes carry markup in every name, the largest accepted figures and refused ones', async () => {
    const s = openSession(srv.workDir, { sid: newId('s'), agent: AGENT, provenance: 'hook' });
    const m = s.message({ user_id: PERSON, text: 'spend it all' });
    const t = s.turnStart({ context_message_ids: [m.id] });
    const note = (id: string, usage: Record<string, unknown>, model = MODEL) =>
      s.note(
        { author: 'claude-code', text: 'token usage' },
        {
          extra: { import_kind: 'token_usage', usage_source: 'claude_message', message_id: id, model, usage },
        },
      );
    note('msg_max', { input_tokens: 1e12, output_tokens: 1e12 });
    note('msg_max_priced', { input_tokens: 1e12, output_tokens: 1e12 }, 'claude-sonnet-4-5');
    note('msg_refused', { input_tokens: 1e13, output_tokens: -1 });
    s.turnEnd({ turn_id: t.id, status: 'completed' });
    s.end();
    sid = s.sid;
    await upload(srv, srv.admin, readLocal(s));
    const u = await request(srv, 'GET', `/v1/sessions/${sid}/usage`, { token: srv.admin });
    expect(u.status, u.text).toBe(200);
    expect(u.json.total.input_tokens).toBe(2e12);
    // claude-sonnet-4-5 at 10^12 in and out, past its 200k-token tier: $6/M in, $22.50/M out = $28.5M,
    // exact in micro-dollars
    expect(u.json.total.cost_micros).toBe(28_500_000 * 1_000_000);
  });

  it('every board page that shows cost escapes the names and shows the figures', async () => {
    const paths = [
      '/',
      `/sessions/${sid}`,
      `/people/${encodeURIComponent(PERSON)}`,
      `/agents/${encodeURIComponent(AGENT)}`,
    ];
    for (const path of paths) {
      const a = await page(path);
      expect(a.status, `${path}: ${a.text.slice(0, 300)}`).toBe(200);
      for (const raw of RAW) expect(a.text, `${path} holds ${raw}`).not.toContain(raw);
      expect(a.text).not.toMatch(/NaN|Infinity|undefined/);
    }
    const session = (await page(`/sessions/${sid}`)).text;
    expect(session).toContain('$28,500,000.00');
    expect(session).toContain('&lt;script&gt;');
  });

  it("the overview API's row agrees with the session's usage", async () => {
    const o = await request(srv, 'GET', '/v1/board/overview', { token: srv.tokens.board });
    expect(o.status, o.text).toBe(200);
    const row = (o.json.rows as { sid: string; usage: { cost_usd: number | null } | null }[]).find(
      (r) => r.sid === sid,
    );
    expect(row?.usage?.cost_usd).toBe(28_500_000);
    // this month's band holds it too, finite
    expect(o.json.usage.month.cost_usd).toBeGreaterThanOrEqual(28_500_000);
    expect(o.text).not.toMatch(/NaN|Infinity/);
  });
});
