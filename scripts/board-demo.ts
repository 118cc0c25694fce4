/**
 * A small team's day on the board (issue 14): sessions in every state with people, agents, work items,
 * declared evidence and one session an auditor would read (two people, an agent with actions that pass
 * and fail, a correction, a quarantined line). Written through the API of a running server, as clients
 * would. Used by `npm run screenshots` (scripts/screenshots.ts); also handy by hand:
 * `npx tsx scripts/board-demo.ts URL ADMIN_TOKEN` fills a local server's board.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSession, type SessionWriter } from '../lib/log/index.js';

const MIN = 60_000_000; // µs

type Api = (method: string, path: string, body?: unknown, type?: string) => Promise<unknown>;

function client(base: string, token: string): Api {
  return async (method, path, body, type = 'application/json') => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': type },
      body:
        body === undefined
          ? undefined
          : typeof body === 'string' || body instanceof Uint8Array
            ? body
            : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.status === 204 ? null : res.json();
  };
}

async function upload(api: Api, w: SessionWriter, extra = ''): Promise<void> {
  const bytes = Buffer.concat([readFileSync(w.path), Buffer.from(extra)]);
  await api('POST', `/v1/sessions/${w.sid}/writers/${w.w}/chunks?offset=0`, bytes, 'application/x-ndjson');
}

/** A short session: a person's prompt and an agent's first turn. */
async function short(
  api: Api,
  dir: string,
  o: { person: string; agent: string; prompt: string; minutesAgo: number; state?: string; note?: string },
): Promise<string> {
  const t0 = Date.now() * 1000 - o.minutesAgo * MIN;
  let t = t0;
  const clock = () => (t += 1_500_000);
  const s = openSession(dir, { agent: o.agent, host: 'demo' }, { clock });
  s.participantJoin({ user_id: o.person, display_name: null });
  const m = s.message({ user_id: o.person, text: o.prompt });
  const turn = s.turnStart({ context_message_ids: [m.id] });
  const a = s.action({ turn_id: turn.id, tool: 'Bash', input: { command: 'git status' } });
  s.actionResult({ action_id: a.id, status: 'ok', output: 'On branch main', exit_code: 0 });
  s.output({ turn_id: turn.id, text: 'Looking into it.' });
  s.close();
  await upload(api, s);
  if (o.state) await api('POST', `/v1/sessions/${s.sid}/status`, { state: o.state, note: o.note ?? '' });
  return s.sid;
}

/**
 * Fills the board of the server at `base` (admin token `token`): ten sessions and the audited one.
 * @returns the audited session's id
 */
export async function seedBoardDemo(base: string, token: string): Promise<{ audited: string }> {
  const api = client(base, token);
  const dir = mkdtempSync(join(tmpdir(), 'hansard-demo-'));
  try {
    const plans: Parameters<typeof short>[2][] = [
      {
        person: 'priya',
        agent: 'claude-code',
        prompt: 'Make the nightly export resumable',
        minutesAgo: 190,
        state: 'blocked',
        note: 'needs the S3 bucket policy from ops',
      },
      {
        person: 'tomasz',
        agent: 'codex',
        prompt: 'Upgrade the payments SDK to v5',
        minutesAgo: 75,
        state: 'blocked',
        note: 'staging credentials expired',
      },
      {
        person: 'amara',
        agent: 'claude-code',
        prompt: 'Add retries to the webhook sender',
        minutesAgo: 50,
        state: 'needs_review',
        note: 'PR #412 is ready',
      },
      {
        person: 'li',
        agent: 'codex',
        prompt: 'Find why the search index lags',
        minutesAgo: 35,
        state: 'working',
        note: 'profiling the indexer',
      },
      {
        person: 'priya',
        agent: 'claude-code',
        prompt: 'Write the migration for invoice numbers',
        minutesAgo: 22,
        state: 'working',
        note: 'running the migration tests',
      },
      {
        person: 'jon',
        agent: 'ci',
        prompt: 'Nightly end-to-end run',
        minutesAgo: 300,
        state: 'done',
        note: 'all 412 tests passed',
      },
      {
        person: 'sofia',
        agent: 'claude-code',
        prompt: 'Tidy the onboarding docs',
        minutesAgo: 2900,
        state: 'done',
        note: 'merged',
      },
      { person: 'noor', agent: 'codex', prompt: 'Spike: can we drop the cron box?', minutesAgo: 600 },
    ];
    const sids: string[] = [];
    for (const p of plans) sids.push(await short(api, dir, p));
    // Work items: one observed, one whose lease will have lapsed by the time anyone looks.
    await api('POST', '/v1/work', {
      session: sids[3],
      system: 'codex',
      actor: 'codex',
      subject: { kind: 'session', ref: sids[3] },
      mode: 'profiling',
      summary: 'Profiling the search indexer under production-like load',
      ttl_seconds: 3600,
    });
    await api('POST', '/v1/work', {
      session: sids[4],
      system: 'claude-code',
      actor: 'claude-code',
      subject: { kind: 'session', ref: sids[4] },
      mode: 'testing',
      summary: 'Running the invoice migration tests',
      ttl_seconds: 600,
    });

    // The audited session: a person, their agent, and a CI writer.
    let t = Date.now() * 1000 - 40 * MIN;
    const clock = () => (t += 2_000_000);
    const person = openSession(dir, { agent: null, host: 'priya-laptop' }, { clock });
    const sid = person.sid;
    const agent = openSession(join(dir, sid), { agent: 'claude-code', host: 'priya-laptop' }, { clock });
    const ci = openSession(join(dir, sid), { agent: 'ci', host: 'runner-7' }, { clock });
    const reviewer = openSession(join(dir, sid), { agent: null, host: 'tomasz-desktop' }, { clock });
    person.participantJoin({ user_id: 'priya', display_name: 'Priya Raman' });
    const ask = person.message({
      user_id: 'priya',
      text: 'The invoice PDF test fails on CI; fix it and tell me why.',
    });
    const turn = agent.turnStart({ context_message_ids: [ask.id] });
    const read = agent.action({ turn_id: turn.id, tool: 'Read', input: { file_path: 'src/invoice/pdf.ts' } });
    agent.actionResult({
      action_id: read.id,
      status: 'ok',
      output: 'export function renderInvoice(…)',
      exit_code: null,
    });
    const run1 = agent.action({
      turn_id: turn.id,
      tool: 'Bash',
      input: { command: 'npm test -- invoice-pdf' },
    });
    agent.actionResult({
      action_id: run1.id,
      status: 'error',
      output: 'Expected "€ 12.00", got "€12.00"',
      exit_code: 1,
    });
    const edit = agent.action({
      turn_id: turn.id,
      tool: 'Edit',
      input: { file_path: 'src/invoice/format.ts' },
    });
    agent.actionResult({ action_id: edit.id, status: 'ok', output: 'applied 1 edit', exit_code: null });
    const run2 = agent.action({
      turn_id: turn.id,
      tool: 'Bash',
      input: { command: 'npm test -- invoice-pdf' },
    });
    agent.actionResult({ action_id: run2.id, status: 'ok', output: '12 passed', exit_code: 0 });
    const out = agent.output({
      turn_id: turn.id,
      text: 'Fixed: the currency formatter dropped the narrow no-break space after the symbol on Node 20.',
    });
    agent.turnEnd({ turn_id: turn.id, status: 'completed' });
    reviewer.participantJoin({ user_id: 'tomasz', display_name: 'Tomasz Nowak' });
    reviewer.message({ user_id: 'tomasz', text: 'Does this change the CSV export too?' });
    agent.correct({
      target_id: out.id,
      field: 'text',
      value:
        'Fixed: the currency formatter dropped the narrow no-break space (U+202F) after the symbol since the ICU update in Node 20.',
      reason: 'named the exact character and cause',
    });
    ci.note({ author: 'ci', text: 'pipeline 8812: invoice-pdf passed on 3 platforms' });
    person.end();
    agent.end();
    ci.end();
    reviewer.end();
    await upload(api, person);
    await upload(api, reviewer);
    // A line a crashed tool left half-written: stored and quarantined, never dropped.
    await upload(api, agent);
    await upload(api, ci, '{"v":3,"sid":"broken\n');
    await api('POST', `/v1/sessions/${sid}/status`, {
      state: 'needs_review',
      note: 'invoice PDF test fixed; please review the formatter change',
      events: [
        { kind: 'evidence', evidence: [{ type: 'test', ref: 'npm test', result: 'passed' }] },
        { kind: 'evidence', evidence: [{ type: 'commit', ref: 'a1b2c3d', result: 'passed' }] },
      ],
    });
    return { audited: sid };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [base, token] = process.argv.slice(2);
  if (!base || !token) {
    console.error('usage: npx tsx scripts/board-demo.ts URL ADMIN_TOKEN');
    process.exit(2);
  }
  const { audited } = await seedBoardDemo(base, token);
  console.log(`board filled; the audited session is ${base}/sessions/${audited}`);
}
