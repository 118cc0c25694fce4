/**
 * Text cut for display keeps whole characters (issue 25.6): wherever the server shortens what a writer
 * wrote (the overview's title at 160 units and names at 64, a writer record's agent at 200, the
 * timeline's title, input summary, writer names and 8 KiB excerpts, the text replay's 240-unit lines),
 * the cut falls between grapheme clusters, never inside a flag (two regional indicators), an emoji ZWJ
 * sequence (`👩‍💻` = 👩 + U+200D + 💻) or a letter and its combining accent. Each text below puts one of
 * those across every one of these cuts. Over real HTTP: `GET /v1/board`, `GET /v1/board/overview`,
 * the overview, agent and session pages, and the text replay.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

const srv = useServer({ tokens: { board: ['board'], read: ['read'] } });

const FLAG = '\u{1F1EB}\u{1F1F7}'; // 🇫🇷: two regional indicators, four UTF-16 units, eight UTF-8 bytes
const CODER = '\u{1F469}\u200D\u{1F4BB}'; // 👩‍💻
/** 'x' then flags: every cut at 4k + 2 or 4k + 3 units (or 8k + 2..7 bytes) from its start splits one. */
const FLAGS = `x${FLAG.repeat(3000)}`;
/** The summary keeps 64 units of a name: 61 + 👩 (2) + the joiner (1) = 64, 💻 past the cut. */
const AGENT_64 = `${'a'.repeat(61)}${CODER}z`;
/** A writer record keeps 200 units: 197 + 👩 + the joiner = 200. */
const AGENT_200 = `${'b'.repeat(197)}${CODER}`;
/** The timeline names a writer in 80 units with an ellipsis (79 kept): 76 + 👩 + the joiner = 79. */
const AGENT_79 = `${'c'.repeat(76)}${CODER}`;
/** q has no precomposed form with an acute accent: 63 + q = 64, its accent past the cut. */
const AGENT_ACCENT = `${'d'.repeat(63)}q\u0301`;

/** A run of regional indicators of odd length: half a flag. */
const HALF_FLAG = /(?<!\p{RI})\p{RI}(?:\p{RI}\p{RI})*(?!\p{RI})/u;
/** A zero-width joiner that joins nothing: the rest of its emoji was cut off. */
const BARE_JOINER = /\u200D(?!\p{Extended_Pictographic})/u;
/** The q of `AGENT_ACCENT` with its accent cut off. */
const BARE_Q = /dq(?!\u0301|%CC%81)/;

function expectWhole(text: string, where: string): void {
  expect(text, where).not.toMatch(HALF_FLAG);
  expect(text, where).not.toMatch(BARE_JOINER);
  expect(text, where).not.toMatch(BARE_Q);
}

let sid = '';
const cookie = () => ({ headers: { cookie: `hansard_board=${srv.tokens.board}` } });

beforeAll(async () => {
  const first = openSession(srv.workDir, { agent: AGENT_64 });
  sid = first.sid;
  first.participantJoin({ user_id: 'priya', display_name: null });
  const m = first.message({ user_id: 'priya', text: FLAGS });
  const t = first.turnStart({ context_message_ids: [m.id] });
  const a = first.action({ turn_id: t.id, tool: 'Bash', input: { command: FLAGS } });
  first.actionResult({ action_id: a.id, status: 'ok', output: FLAGS, exit_code: 0 });
  first.output({ turn_id: t.id, text: FLAGS });
  first.turnEnd({ turn_id: t.id, status: 'completed' });
  first.end();
  const writers = [first];
  for (const agent of [AGENT_200, AGENT_79, AGENT_ACCENT]) {
    const w = openSession(first.dir, { agent });
    w.note({ author: agent, text: FLAGS });
    w.end();
    writers.push(w);
  }
  for (const w of writers) await upload(srv, srv.tenant.admin, readLocal(w));
});

describe('text the server cuts for display', () => {
  it('keeps whole characters in the board JSON: titles, summary names and writer-record names', async () => {
    const overview = await request(srv, 'GET', '/v1/board/overview', { token: srv.tokens.board });
    expect(overview.status, overview.text).toBe(200);
    const row = overview.json.rows.find((r: { sid: string }) => r.sid === sid);
    expect(row.title.startsWith(`x${FLAG}`)).toBe(true);
    expectWhole(row.title, 'overview title');
    expect(row.title.length).toBeLessThanOrEqual(160);
    expect(row.title.length).toBeGreaterThan(150);
    for (const name of [...row.agents, ...overview.json.facets.agents]) expectWhole(name, `agent ${name}`);
    expect(row.agents).toContain('a'.repeat(61));
    expect(row.asked[0].text).toBe(row.title);

    const board = await request(srv, 'GET', '/v1/board', { token: srv.tokens.board });
    expect(board.status, board.text).toBe(200);
    const session = board.json.sessions.find((s: { sid: string }) => s.sid === sid);
    for (const name of session.agents) expectWhole(name, `writer agent ${name}`);
    expect(session.agents).toContain('b'.repeat(197));
  });

  it('keeps whole characters on the overview, an agent view and the session page', async () => {
    for (const path of ['/', `/agents/${'a'.repeat(61)}`, `/sessions/${sid}`]) {
      const page = await request(srv, 'GET', path, cookie());
      expect(page.status, path).toBe(200);
      expect(page.text).toContain(`x${FLAG}${FLAG}`);
      expectWhole(page.text, path);
    }
  });

  it('keeps whole characters in the text replay', async () => {
    const text = await request(srv, 'GET', `/v1/sessions/${sid}/replay?format=text`, {
      token: srv.tokens.read,
    });
    expect(text.status, text.text).toBe(200);
    expect(text.text).toContain(`x${FLAG}${FLAG}`);
    expect(text.text).toContain('…');
    expectWhole(text.text, 'text replay');
  });
});
