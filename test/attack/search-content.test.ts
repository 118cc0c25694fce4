/**
 * Attacks on search through what writers write and what searchers type (issue 30 items 1-3), over real
 * HTTP on loopback with the local stores (SQLite FTS5): a writer's text must reach the API's snippet, the
 * board's results and the command line's terminal as text (no HTML, no escape sequence, no bidi trick);
 * a query is data, never FTS5 or SQL syntax; hostile `q`, `limit` and `cursor` are 400s, never 500s; and
 * every answer stays within the bounds docs/search.md gives (a snippet of 200 characters).
 *
 * Finding fixed (lib/service/search/snippet.ts): SEARCH-SNIPPET-LONG — a snippet never ended inside a
 * marked word, so a writer's 16,000-letter word (a base64 blob, a hash) made every hit on it a 16 KB
 * snippet, 80 times the bound (50 hits: 800 KB an answer).
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Io } from '../../lib/client/api/io.js';
import { search as searchCommand } from '../../lib/client/cli/cmd-search.js';
import { SearchAnswer, SNIPPET_CHARS } from '../../lib/contract/search.js';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({
  tenants: ['acme', 'globex'],
  tokens: {
    ingest: ['ingest'],
    reader: ['read'],
    board: ['board'],
    globexIngest: { tenant: 'globex', scopes: ['ingest'] },
    globexRead: { tenant: 'globex', scopes: ['read'] },
  },
});

type Writer = ReturnType<typeof openSession>;

function newWriter(agent: string, sid?: string): Writer {
  mkdirSync(srv.workDir, { recursive: true });
  return openSession(
    mkdtempSync(join(srv.workDir, 'content-')),
    { agent, ...(sid ? { sid } : {}) },
    { redact: { disabled: true } },
  );
}

async function upload(s: Writer, token = srv.tokens.ingest, from = 0): Promise<number> {
  const bytes = readFileSync(s.path);
  const r = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=${from}`, {
    token,
    body: bytes.subarray(from),
  });
  expect(r.status, r.text).toBe(201);
  return bytes.length;
}

async function search(q: string, token = srv.tokens.reader, extra = '&limit=50'): Promise<SearchAnswer> {
  const r = await request(srv, 'GET', `/v1/search?q=${encodeURIComponent(q)}${extra}`, { token });
  expect(r.status, r.text).toBe(200);
  return SearchAnswer.parse(r.json);
}

/** Control, bidi and other invisible characters a display must not receive raw. */
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters looked for
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;
const ESC = '\u001b';
const OSC8 = `${ESC}]8;;https://evil.example/${'\u0007'}click here${ESC}]8;;${'\u0007'}`;
const HTML = '<script>alert(1)</script><img src=x onerror=alert(2)><a href="javascript:alert(3)">x</a>';

let hostileSid = '';

async function hostileSession(): Promise<string> {
  if (hostileSid) return hostileSid;
  const s = newWriter(`evil${ESC}[31magent`);
  hostileSid = s.sid;
  const m = s.message({
    user_id: `mallory${ESC}[2J\u202e`,
    text: `frobnicate ${HTML} ${OSC8} ${ESC}[2J\u202egnp.exe \u0000 nul ${ESC}[8m hidden`,
  });
  const t = s.turnStart({ context_message_ids: [m.id] });
  s.action({
    turn_id: t.id,
    tool: `ba${ESC}]0;pwned${'\u0007'}sh`,
    input: { command: `frobnicate --now ${OSC8} ${HTML}` },
    caused_by: [m.id],
  });
  s.output({ turn_id: t.id, text: `frobnicate done ${HTML} ${OSC8}`, caused_by: [m.id] });
  s.note({ author: `n${ESC}[1mote`, text: `frobnicate note ${OSC8}` });
  await upload(s);
  await srv.indexNow();
  return hostileSid;
}

describe('what writers wrote, as search shows it', () => {
  it('the API’s snippets and titles hold no control, bidi or escape character', async () => {
    await hostileSession();
    const a = await search('frobnicate');
    expect(a.hits.map((h) => h.type).sort()).toEqual(['action', 'message', 'note', 'output']);
    for (const h of a.hits) {
      for (const p of h.snippet) expect(UNSAFE.test(p.text), JSON.stringify(p.text)).toBe(false);
      expect(UNSAFE.test(h.title ?? ''), JSON.stringify(h.title)).toBe(false);
      expect(h.link).toMatch(/^\/sessions\/s_[0-9A-Z]{26}(\?at=[A-Za-z0-9_%-]+)?#[A-Za-z0-9_-]+$/);
    }
  });

  it('the board’s results page shows it all as text', async () => {
    await hostileSession();
    const r = await request(srv, 'GET', '/search?q=frobnicate', { token: srv.tokens.board });
    expect(r.status, r.text).toBe(200);
    expect(r.text).toContain('<mark>frobnicate</mark>');
    expect(r.text).not.toContain('<script>alert');
    expect(r.text).not.toContain('<img src=x');
    expect(r.text).not.toContain('href="javascript:');
    expect(
      r.text.match(new RegExp(UNSAFE.source, 'gu'))?.map((c) => c.codePointAt(0)?.toString(16)),
    ).toBeUndefined();
  });

  it('the command line prints no escape sequence of a writer’s, on a terminal', async () => {
    await hostileSession();
    let out = '';
    let err = '';
    const io: Io = {
      stdout: {
        write: (s) => {
          out += String(s);
          return true;
        },
        isTTY: true,
      },
      stderr: {
        write: (s) => {
          err += s;
          return true;
        },
        isTTY: true,
      },
      env: { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.tokens.reader, HOME: srv.workDir },
      cwd: srv.workDir,
    };
    await searchCommand(['frobnicate'], { timeout: '10m' }, io);
    expect(err).toBe('');
    // The only escapes are the command's own bold marks around the matches.
    const stripped = out.replaceAll(`${ESC}[1m`, '').replaceAll(`${ESC}[22m`, '');
    expect(stripped).toContain('frobnicate');
    expect(UNSAFE.test(stripped), JSON.stringify(stripped)).toBe(false);
  });
});

describe('hostile queries', () => {
  const queries = [
    'frobnicate NEAR(frobnicate note, 2)',
    'frobnicate OR 1=1',
    '^frobnicate*',
    'body:frobnicate',
    'facets:evil',
    '{body facets}: frobnicate',
    '(frobnicate',
    '"frobnicate""',
    '"frob""nicate"',
    'frobnicate "a ""b"" c"',
    "agent:'; DROP TABLE search_docs; --",
    "person:\"x' OR '1'='1\"",
    'tool:bash) OR (1=1',
    'frobnicate & !x | y <-> z:* ',
    'frobnicate :tenant ::text $1 ?',
    '\u0000frobnicate',
    'frob\u202enicate',
    `${'a'.repeat(500)}`,
    'a b c d e f g h i j k l m n o p',
    'a b c d e f g h i j k l m n o p q',
    `"${'w '.repeat(17)}"`,
    'session:s_01JF3Q6XRC9Y7T5W2M4N8B0KHD session:x',
    'after:9999-99-99',
    'after:2026-02-30',
    'after:99999d',
    'after:9999d',
    'before:0m',
    'type:message type:message type:message type:message type:message type:message type:message type:message type:message',
    '-frobnicate -"frobnicate note"',
    'frobnicate -',
    '"" frobnicate',
    'https://example.com/frobnicate',
    'frobnicate:',
    'a:b',
  ];
  it.each(queries)('%j is 200 or a 400 saying why, never a 500', async (q) => {
    await hostileSession();
    const r = await request(srv, 'GET', `/v1/search?q=${encodeURIComponent(q)}`, {
      token: srv.tokens.reader,
    });
    expect([200, 400], r.text).toContain(r.status);
    if (r.status === 400) expect(r.json.error.code).toBe('bad_query');
    else SearchAnswer.parse(r.json);
    const page = await request(srv, 'GET', `/search?q=${encodeURIComponent(q)}`, { token: srv.tokens.board });
    expect([200, 400], page.text.slice(0, 300)).toContain(page.status);
    expect(page.text).not.toContain('<script>alert');
  });

  it('a lone surrogate or invalid UTF-8 in q is 200 or 400, never 500', async () => {
    for (const raw of ['%ED%A0%80frobnicate', '%FF%FEfrobnicate', 'frob%C0%AFnicate', '%F4%90%80%80']) {
      const r = await request(srv, 'GET', `/v1/search?q=${raw}`, { token: srv.tokens.reader });
      expect([200, 400], `${raw}: ${r.text}`).toContain(r.status);
      const page = await request(srv, 'GET', `/search?q=${raw}`, { token: srv.tokens.board });
      expect([200, 400], `${raw}: ${page.status}`).toContain(page.status);
    }
  });

  it('the engine is intact and no other tenant is reached after them all', async () => {
    await hostileSession();
    const g = newWriter('codex');
    g.message({ user_id: 'gus', text: 'globex frobnicate secret' });
    await upload(g, srv.tokens.globexIngest);
    await srv.indexNow();
    expect((await search('frobnicate')).hits).toHaveLength(4);
    expect((await search('frobnicate', srv.tokens.globexRead)).hits).toHaveLength(1);
    expect((await search('secret')).hits).toEqual([]);
  });

  it.each([
    ['&limit=0'],
    ['&limit=-1'],
    ['&limit=51'],
    ['&limit=1e1'],
    ['&limit=0x10'],
    ['&limit=10&limit=20'],
    ['&q=other'],
    ['&cursor=zz_0123456789'],
    ['&cursor=rs_0123456789'],
    [`&cursor=${'a'.repeat(300)}`],
  ])('hostile parameters %s are 400, never 500', async (extra) => {
    const r = await request(srv, 'GET', `/v1/search?q=frobnicate${extra}`, { token: srv.tokens.reader });
    expect(r.status, r.text).toBe(400);
  });

  it('the board page takes repeated and oversized q as a 400 page', async () => {
    for (const qs of [
      '?q=a&q=b',
      `?q=${'x'.repeat(5000)}`,
      `?q=${'x'.repeat(600)}`,
      '?q=%3Cscript%3E&cursor=%00',
    ]) {
      const r = await request(srv, 'GET', `/search${qs}`, { token: srv.tokens.board });
      expect([200, 400], `${qs.slice(0, 40)}: ${r.status}`).toContain(r.status);
      expect(r.text).not.toContain('<script>');
    }
  });
});

describe('bounds of an answer', () => {
  it('a snippet holds at most 200 characters, even for a word of 16,000 letters (SEARCH-SNIPPET-LONG)', async () => {
    const s = newWriter('codex');
    const blob = `Zq${'x'.repeat(16_000)}`;
    for (let i = 0; i < 3; i++) s.message({ user_id: 'priya', text: `${blob} blob ${i}` });
    await upload(s);
    await srv.indexNow();
    // The query's word is the blob's term: its first 64 letters.
    const a = await search(blob.slice(0, 64));
    expect(a.hits).toHaveLength(3);
    for (const h of a.hits) {
      const length = h.snippet.map((p) => p.text).join('').length;
      expect(length).toBeLessThanOrEqual(SNIPPET_CHARS + 2);
      expect(h.snippet.some((p) => p.hit)).toBe(true);
    }
  });
});
