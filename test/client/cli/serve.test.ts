/** `hansard serve`'s start (issue 2): the board link of each start replaces the previous one. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../../../lib/deploy/local-serve.js';
import { hasControl } from '../../../lib/log/format/escape.js';
import { navigate } from '../../support/http.js';

const data = mkdtempSync(join(tmpdir(), 'hansard-serve-'));
afterAll(() => rmSync(data, { recursive: true, force: true }));

let printed: string[] = [];
const start = () =>
  startServer({ port: 0, host: '127.0.0.1', data, print: (l) => printed.push(l), log: () => {} });
const boardStatus = async (url: string, link: string) => {
  const token = new URL(link).searchParams.get('token')!;
  const res = await fetch(`${url}/v1/board`, { headers: { authorization: `Bearer ${token}` } });
  await res.body?.cancel();
  return res.status;
};

describe('the board link', () => {
  it('of a new start works, and the previous start’s link no longer does, as the start says', async () => {
    printed = [];
    const first = await start();
    // The promise printed must be the behaviour below: not "valid 30 days" when a restart ends it.
    const said = printed.findIndex((l) => l.startsWith('Open the board'));
    expect(printed[said]).toBe(
      'Open the board (this link signs you in until the next start of hansard serve, which prints a new one):',
    );
    expect(printed[said + 1]).toBe(`  ${first.boardUrl}`);
    const firstLink = first.boardUrl;
    expect(await boardStatus(first.url, firstLink)).toBe(200);
    await first.close();
    const second = await start();
    try {
      expect(await boardStatus(second.url, second.boardUrl)).toBe(200);
      expect(await boardStatus(second.url, firstLink)).toBe(401);
    } finally {
      await second.close();
    }
  });
});

describe('the request log', () => {
  it('has one line per request with method, path, status and time, and never the query (a board link carries a token)', async () => {
    const lines: string[] = [];
    const s = await startServer({
      port: 0,
      host: '127.0.0.1',
      data,
      print: () => {},
      log: () => {},
      requestLog: (l) => lines.push(l),
    });
    try {
      const token = new URL(s.boardUrl).searchParams.get('token')!;
      // As a browser opens the printed link (fetch() would get the sign-in confirmation page).
      const link = new URL(s.boardUrl);
      await navigate({ url: s.url }, `${link.pathname}${link.search}`);
      await (await fetch(`${s.url}/healthz`)).body?.cancel();
      expect(lines[0]).toMatch(/^GET \/ 303 \d+ ms$/);
      expect(lines[1]).toMatch(/^GET \/healthz 200 \d+ ms$/);
      expect(lines.join('\n')).not.toContain(token);
    } finally {
      await s.close();
    }
  });
});

describe('hansard token list', () => {
  it('shows each token’s state, scopes, session binding and expiry, never its secret', async () => {
    const admin = `hns_${'T'.repeat(43)}`;
    const dir = mkdtempSync(join(tmpdir(), 'hansard-serve-list-'));
    const s = await startServer({
      port: 0,
      host: '127.0.0.1',
      data: dir,
      bootstrapToken: admin,
      print: () => {},
      log: () => {},
    });
    const { runCli } = await import('../../../lib/client/cli/main.js');
    let out = '';
    let err = '';
    const io = {
      stdout: { write: (x: string | Uint8Array) => (out += String(x)) },
      stderr: { write: (x: string) => (err += x) },
      env: { HANSARD_URL: s.url, HANSARD_TOKEN: admin },
      cwd: dir,
    };
    try {
      const sid = 's_01KZVVGRNR3D5V708Z4NPGG11H';
      expect(await runCli(['token', 'create', '--scopes', 'ingest', '--session', sid], io)).toBe(0);
      expect(err).toMatch(
        new RegExp(`^token tok_\\w+ with scopes ingest, bound to session ${sid}, expires `),
      );
      const secret = out.trim();
      out = '';
      expect(await runCli(['token', 'list'], io)).toBe(0);
      const bound = out.split('\n').find((l) => l.includes(sid))!;
      expect(bound).toMatch(
        /active\s+ingest\s+session s_01KZVVGRNR3D5V708Z4NPGG11H\s+until \d{4}-\d\d-\d\d \d\d:\d\d/,
      );
      expect(out).toMatch(/admin,.*any session\s+no expiry/);
      expect(out).not.toContain(secret);
      expect(out).not.toContain(admin);

      // A label is the minter's words: control characters must not reach the terminal raw.
      const forged = '\u001b[2K\r\u001b[1A tok_X  revoked  admin\n\u001b]0;pwned\u0007\u202e';
      out = '';
      expect(await runCli(['token', 'create', '--scopes', 'read', '--label', forged], io)).toBe(0);
      out = '';
      expect(await runCli(['token', 'list'], io)).toBe(0);
      expect(hasControl(out.replaceAll('\n', ''))).toBe(false);
      const rows = out.trimEnd().split('\n');
      expect(rows).toHaveLength(4); // admin, board link, the session token, this one
      expect(rows.find((r) => r.includes('pwned'))).toContain(
        '\\x1b[2K\\r\\x1b[1A tok_X  revoked  admin\\n\\x1b]0;pwned\\x07\\u202e',
      );
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
