/**
 * `hansard export SID --out FILE --replay-url URL` (env HANSARD_REPLAY_URL), the large-session path on
 * AWS (docs/audit.md): the CLI asks the API URL to sign a digest (`POST …/digests`) and downloads
 * `…/export?head={seq}` from the replay URL. Here the API is a real server on loopback (LocalKeyring)
 * and the replay URL a stand-in that, like the replay function, forwards only `GET …/export` to it and
 * answers anything else 404 while it records what it was asked; the saved bundle verifies offline.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalKeyring } from '../../../lib/audit/local-keyring.js';
import { runHansard } from '../../support/cli.js';
import { request } from '../../support/http.js';
import { writeSession } from '../../support/segments.js';
import { useServer } from '../../support/server.js';
import { upload } from '../../support/stored.js';
import { tmpDirs } from '../../support/tmp.js';

const scratch = tmpDirs('hansard-export-replay-url-');
const { keyring } = LocalKeyring.open(scratch.make());
const srv = useServer({ tokens: { reader: ['read'] }, deps: { signer: keyring } });

/** What the stand-in replay URL was asked: `METHOD path?query`. */
const asked: string[] = [];
let replay: Server;
let replayUrl: string;

beforeAll(async () => {
  replay = createServer(async (req, res) => {
    asked.push(`${req.method} ${req.url}`);
    if (req.method !== 'GET' || !/^\/v1\/sessions\/[^/]+\/export(\?|$)/.test(req.url ?? '')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'not_found', message: 'use the API URL', details: {} } }));
      return;
    }
    const up = await fetch(`${srv.url}${req.url}`, {
      headers: { authorization: req.headers.authorization! },
    });
    res.writeHead(up.status, Object.fromEntries(up.headers));
    Readable.fromWeb(up.body as import('node:stream/web').ReadableStream<Uint8Array>).pipe(res);
  });
  await new Promise<void>((done) => replay.listen(0, '127.0.0.1', done));
  replayUrl = `http://127.0.0.1:${(replay.address() as AddressInfo).port}`;
});

afterAll(async () => {
  replay.closeAllConnections();
  await new Promise((done) => replay.close(done));
});

describe('hansard export --replay-url', () => {
  it('signs on the API URL, downloads ?head=N from the replay URL, and the bundle verifies', async () => {
    const seg = writeSession(srv.workDir);
    await upload(srv, srv.tenant.admin, seg);
    const cwd = scratch.make();
    const env = { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.tokens.reader };
    for (const how of ['flag', 'env'] as const) {
      asked.length = 0;
      const args = ['export', seg.sid, '--out', `${how}.tar.gz`, '--json'];
      const r = await runHansard(how === 'flag' ? [...args, '--replay-url', replayUrl] : args, {
        cwd,
        env: how === 'env' ? { ...env, HANSARD_REPLAY_URL: replayUrl } : env,
      });
      expect(r.code, r.err).toBe(0);
      const { head_seq: n } = JSON.parse(r.out) as { head_seq: number };
      // The replay URL was asked for the bundle only, up to the digest the API signed.
      expect(asked).toEqual([`GET /v1/sessions/${seg.sid}/export?head=${n}`]);
      const keys = join(cwd, 'keys.json');
      writeFileSync(keys, (await request(srv, 'GET', '/v1/keys')).text);
      const v = await runHansard(['verify', '--digests', join(cwd, `${how}.tar.gz`), '--public-key', keys], {
        cwd,
      });
      expect(v.code, `${v.out}${v.err}`).toBe(0);
    }
  });

  it('refuses a replay URL that is not http(s) before asking anything, and --help says when to use it', async () => {
    asked.length = 0;
    const seg = writeSession(srv.workDir);
    const cwd = scratch.make();
    const r = await runHansard(['export', seg.sid, '--out', 'x.tar', '--replay-url', 'ftp://nope'], {
      cwd,
      env: { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.tokens.reader },
    });
    expect(r.code).toBe(2);
    expect(r.err).toContain('--replay-url "ftp://nope" is not an http(s) URL');
    expect(asked).toEqual([]);
    const help = await runHansard(['export', '--help'], { cwd });
    expect(`${help.out}${help.err}`).toMatch(/--replay-url <url>/);
    expect(`${help.out}${help.err}`).toMatch(/On AWS, a session over a few MB: pass --replay-url/);
  });
});
