/**
 * Hostile readers of whole sessions (issue 8 item 3): a token may run only `maxConcurrentReplays` replays,
 * segment downloads, verifies, inspects, attributions and board timeline pages at once (429
 * `too_many_replays` with `Retry-After`; a 429 page for the board), tokens minted from it count with it,
 * and a slot comes back however the response ends: the body read to its end, the client gone mid-body, a
 * HEAD that never reads. Real HTTP on loopback, a real session of several MiB on disk, and readers that
 * stop reading (raw sockets, paused) so that a replay stays open.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateSession } from '../../bench/gen.js';
import { runCli } from '../../lib/client/cli/main.js';
import { listSegments } from '../../lib/log/index.js';
import { expectError, request, type StalledReader, stalledReader } from '../support/http.js';
import { mint, useServer } from '../support/server.js';

const CAP = 2;
const srv = useServer({ tenants: ['acme'], deps: { limits: { maxConcurrentReplays: CAP } } });
let sid: string;
let firstWriter: string;
let fullLength: number;

beforeAll(async () => {
  // ~18 MB over 4 writers: more than loopback's socket buffers hold, so a reader that stops reading
  // keeps its replay open on the server.
  const dir = await generateSession(srv.workDir, 60_000, 4);
  sid = dir.split('/').pop()!;
  for (const { w, path } of listSegments(dir)) {
    const bytes = readFileSync(path);
    let offset = 0;
    while (offset < bytes.length) {
      // Whole lines, under 10,000 a chunk and 5 MiB.
      let end = Math.min(bytes.length, offset + 2 * 1024 * 1024);
      end = bytes.lastIndexOf(0x0a, end - 1) + 1;
      const a = await request(srv, 'POST', `/v1/sessions/${sid}/writers/${w}/chunks?offset=${offset}`, {
        token: srv.admin,
        body: bytes.subarray(offset, end),
      });
      expect(a.status, a.text).toBe(201);
      offset = end;
    }
    firstWriter ??= w;
  }
  const full = await request(srv, 'GET', `/v1/sessions/${sid}/replay`, { token: srv.admin });
  expect(full.status).toBe(200);
  fullLength = full.bytes.length;
  expect(fullLength).toBeGreaterThan(10 * 1024 * 1024);
}, 60_000);

/**
 * `stalledReader`, asked again on a 429 for up to 2 s: a dropped reader's slot comes back once the server
 * sees its close, which may come after it reads the next request.
 */
async function stalledReaderWhenFree(path: string, token: string): Promise<StalledReader> {
  for (let i = 0; ; i++) {
    const r = await stalledReader(srv, path, token);
    if (r.status !== 429 || i === 100) return r;
    r.drop();
    await new Promise((res) => setTimeout(res, 20));
  }
}

const replay = () => `/v1/sessions/${sid}/replay`;

describe('the per-token cap on whole-session reads', () => {
  it('refuses one more replay than the cap with 429 too_many_replays and Retry-After; other tokens go on', async () => {
    const token = await mint(srv, srv.tenant.name, ['read']);
    const held = [await stalledReader(srv, replay(), token), await stalledReader(srv, replay(), token)];
    try {
      expect(held.map((h) => h.status)).toEqual([200, 200]);
      const refused = await request(srv, 'GET', replay(), { token });
      const err = expectError(srv, refused, 429, 'too_many_replays');
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(err.details).toEqual({ limit: CAP, retry_after_seconds: 5 });
      expect(err.message).toContain(`${CAP} replays`);
      // Another token is not held back by this one's reads.
      const other = await request(srv, 'GET', replay(), {
        token: await mint(srv, srv.tenant.name, ['read']),
      });
      expect(other.status).toBe(200);
      expect(other.bytes.length).toBe(fullLength);
    } finally {
      for (const h of held) h.drop();
    }
  });

  it('counts every kind of whole-session read: raw and text replay, segment, verify, inspect, attribution', async () => {
    const token = await mint(srv, srv.tenant.name, ['read']);
    const held = [
      await stalledReader(srv, `${replay()}?raw=1`, token),
      await stalledReader(srv, `/v1/sessions/${sid}/writers/${firstWriter}/segment`, token),
    ];
    try {
      expect(held.map((h) => h.status)).toEqual([200, 200]);
      for (const path of [
        replay(),
        `${replay()}?format=text`,
        `${replay()}?raw=1`,
        `/v1/sessions/${sid}/writers/${firstWriter}/segment`,
        `/v1/sessions/${sid}/verify`,
        `/v1/sessions/${sid}/inspect`,
        `/v1/sessions/${sid}/attribution`,
      ]) {
        expectError(srv, await request(srv, 'GET', path, { token }), 429, 'too_many_replays');
      }
    } finally {
      for (const h of held) h.drop();
    }
  });

  it('counts the board’s timeline page: one more than the cap is a 429 page with Retry-After, and it shows once a slot is free', async () => {
    const token = await mint(srv, srv.tenant.name, ['board']);
    const page = () =>
      request(srv, 'GET', `/sessions/${sid}`, { headers: { cookie: `hansard_board=${token}` } });
    const held = [await stalledReader(srv, replay(), token), await stalledReader(srv, replay(), token)];
    try {
      expect(held.map((h) => h.status)).toEqual([200, 200]);
      const refused = await page();
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.headers.get('content-type')).toContain('text/html');
      expect(refused.text).toContain(`This token already reads ${CAP} whole sessions at once`);
      expect(refused.text).toContain('Reload this page in 5 seconds');
    } finally {
      for (const h of held) h.drop();
    }
    // The dropped replays' slots come back once the server sees their close.
    let shown = await page();
    for (let i = 0; shown.status === 429 && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 20));
      shown = await page();
    }
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('data-kind="message"');
  });

  it('counts the tokens minted from a token with it: minting one does not buy more reads', async () => {
    const parent = await mint(srv, srv.tenant.name, ['read']);
    const minted = await request(srv, 'POST', `/v1/sessions/${sid}/tokens`, {
      token: parent,
      json: { scopes: ['read'] },
    });
    expect(minted.status, minted.text).toBe(201);
    const child = minted.json.token as string;
    const held = [await stalledReader(srv, replay(), parent), await stalledReader(srv, replay(), parent)];
    try {
      expectError(srv, await request(srv, 'GET', replay(), { token: child }), 429, 'too_many_replays');
    } finally {
      for (const h of held) h.drop();
    }
  });
});

describe('a slot comes back', () => {
  it('when the body has been read to its end', async () => {
    const token = await mint(srv, srv.tenant.name, ['read']);
    for (let i = 0; i < CAP + 2; i++) {
      const a = await request(srv, 'GET', replay(), { token });
      expect(a.status).toBe(200);
      expect(a.bytes.length).toBe(fullLength);
    }
  });

  it('when the client goes away mid-body: 20 dropped replays, then the cap’s worth at once all answer in full', async () => {
    const token = await mint(srv, srv.tenant.name, ['read']);
    for (let i = 0; i < 20; i++) {
      const r = await stalledReaderWhenFree(i % 2 ? `${replay()}?raw=1` : replay(), token);
      expect(r.status).toBe(200);
      r.drop();
    }
    // Every dropped replay gave its slot back: the cap's worth run at once.
    await new Promise((r) => setTimeout(r, 200));
    const answers = await Promise.all(
      Array.from({ length: CAP }, () => request(srv, 'GET', replay(), { token })),
    );
    expect(answers.map((a) => [a.status, a.bytes.length])).toEqual(
      Array.from({ length: CAP }, () => [200, fullLength]),
    );
  });

  it('at once for a HEAD, which takes none and reads nothing', async () => {
    const token = await mint(srv, srv.tenant.name, ['read']);
    const held = await stalledReader(srv, replay(), token);
    try {
      for (let i = 0; i < 5; i++) {
        const res = await fetch(`${srv.url}${replay()}`, {
          method: 'HEAD',
          headers: { authorization: `Bearer ${token}` },
        });
        expect(res.status).toBe(200);
        expect((await res.arrayBuffer()).byteLength).toBe(0);
      }
      // One slot is still free after five HEADs.
      const a = await request(srv, 'GET', `/v1/sessions/${sid}/verify`, { token });
      expect(a.status).toBe(200);
    } finally {
      held.drop();
    }
  });
});

describe('hansard serve --max-concurrent-replays', () => {
  it('refuses a value that is not a number of at least 1 (exit 2, names the flag)', async () => {
    for (const bad of ['0', 'many', '-1']) {
      let err = '';
      const io = {
        stdout: { write: () => true },
        stderr: { write: (s: string) => (err += s) },
        env: {},
        cwd: srv.workDir,
      };
      const code = await runCli(['serve', '--port', '0', '--max-concurrent-replays', bad], io);
      expect(code).toBe(2);
      expect(err).toContain('--max-concurrent-replays');
    }
  });
});
