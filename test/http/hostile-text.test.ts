/**
 * Hostile text against the real server of `hansard serve` (issue 8.4): a session whose ids, names and free
 * text hold newlines, terminal escape sequences, C1 controls, DEL and bidi overrides is stored as written,
 * and every text view of it (the text replay, verify, the board's timeline and listing) shows one line
 * per item with those characters escaped. Each case names its row of docs/api.md "Hostile text"; the last
 * test checks the table against the cases.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect } from 'vitest';
import { type DocCase, itEachCase, itMatchesDoc } from '../support/doc-cases.js';
import { HOSTILE_EVENTS, hostileSession, RAW_CONTROL, unforgedProblems } from '../support/hostile-text.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ real: true });
let seg: ReturnType<typeof hostileSession>;

const get = (path: string) => request(srv, { method: 'GET', path, token: srv.admin });

const ROW = {
  stored:
    'text: a newline, an escape sequence, a C1 control, DEL or a bidi override in an id, a name or free text of an event',
  replay: 'text replay (`?format=text`, `hansard replay --format text`) of such events',
  verify: 'verify of such events',
  board: 'board: a session timeline, agent names and a status note holding such characters',
  note: 'status: a note with an escape sequence, a bidi override or a newline',
};

const CASES: DocCase[] = [
  {
    name: 'a segment whose ids, names and free text hold controls is stored and replayed as written',
    row: ROW.stored,
    status: 201,
    run: () =>
      request(srv, {
        method: 'POST',
        path: `/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=0`,
        token: srv.admin,
        body: readFileSync(seg.path),
      }),
    check: async () => {
      const raw = await get(`/v1/sessions/${seg.sid}/replay?raw=1`);
      expect(raw.bytes.equals(readFileSync(seg.path))).toBe(true);
      const ndjson = await get(`/v1/sessions/${seg.sid}/replay`);
      expect(ndjson.text).toBe(readFileSync(seg.path, 'utf8'));
    },
  },
  {
    name: 'the text replay gives one line per event, nothing raw, no forged line',
    row: ROW.replay,
    status: 200,
    run: () => get(`/v1/sessions/${seg.sid}/replay?format=text`),
    check: (a) => {
      const lines = a.text.slice(0, -1).split('\n');
      expect(lines).toHaveLength(HOSTILE_EVENTS);
      expect(unforgedProblems(lines)).toEqual([]);
      expect(a.text).toContain('sam\\n2026-08-12T20:44:13.000000Z  priya');
      expect(a.text).toContain('joins as admin\\u202egnp.exe');
    },
  },
  {
    name: 'verify warns control_characters for each id and name, with escaped messages',
    row: ROW.verify,
    status: 200,
    run: () => get(`/v1/sessions/${seg.sid}/verify`),
    check: (a) => {
      const found = (a.json.problems as Array<{ code: string; severity: string; message: string }>).filter(
        (p) => p.code === 'control_characters',
      );
      expect(found.map((p) => p.message.split(' ')[0]).sort()).toEqual([
        'author',
        'display_name',
        'meta.agent',
        'meta.app',
        'tool',
        'user_id',
      ]);
      for (const p of found) {
        expect(p.severity).toBe('warning');
        expect(p.message).not.toMatch(RAW_CONTROL);
        expect(p.message).not.toContain('\n');
      }
      expect(a.json.ok).toBe(true);
    },
  },
  {
    name: 'the board timeline shows one row per event, escaped',
    row: ROW.board,
    status: 200,
    run: () => get(`/sessions/${seg.sid}`),
    check: (a) => {
      // Structured rows (issue 14.3): a newline in a field cannot make a row of its own.
      const rows = new Set([...a.text.matchAll(/data-pos="(\d+)"/g)].map((m) => m[1]));
      expect(rows.size).toBe(HOSTILE_EVENTS);
      expect(a.text).toContain('sam\\n2026-08-12T20:44:13.000000Z  priya');
      expect(a.text).not.toMatch(RAW_CONTROL);
    },
  },
  {
    name: 'the board listing shows an agent name with a newline escaped',
    row: ROW.board,
    status: 200,
    run: () => get('/'),
    check: (a) => {
      const row = new RegExp(`<tr data-sid="${seg.sid}">[\\s\\S]*?</tr>`).exec(a.text)![0];
      expect(row).toContain('bot\\nsam');
      expect(row).not.toMatch(RAW_CONTROL);
      expect(row).not.toContain('\n');
    },
  },
  {
    name: 'a status note with an escape sequence and a bidi override is stored as sent',
    row: ROW.note,
    status: 201,
    run: () =>
      request(srv, {
        method: 'POST',
        path: `/v1/sessions/${seg.sid}/status`,
        token: srv.admin,
        json: { state: 'done', note: 'deployed \u202edeliaf\u202c \u001b[8mhidden' },
      }),
    check: async () => {
      const status = await get(`/v1/sessions/${seg.sid}/status`);
      expect(status.json.note).toBe('deployed \u202edeliaf\u202c \u001b[8mhidden');
      for (const page of [await get('/'), await get(`/sessions/${seg.sid}`)]) {
        expect(page.status).toBe(200);
        expect(page.text).toContain('deployed \\u202edeliaf\\u202c \\x1b[8mhidden');
        expect(page.text).not.toMatch(RAW_CONTROL);
      }
    },
  },
  {
    name: 'a status note with a newline is refused',
    row: ROW.note,
    status: 400,
    run: () =>
      request(srv, {
        method: 'POST',
        path: `/v1/sessions/${seg.sid}/status`,
        token: srv.admin,
        json: { state: 'done', note: 'ok\n2026-01-01  priya: approved' },
      }),
    check: (a) => {
      expect(a.json.error.code).toBe('invalid_body');
    },
  },
];

beforeAll(async () => {
  seg = hostileSession(srv.workDir);
});

describe('hostile text against the real server', () => {
  itEachCase(srv, CASES);

  itMatchesDoc('Hostile text', CASES);
});
