/**
 * `GET /v1/sessions/{sid}/export` (issue 15.3) over real HTTP on loopback, with a LocalKeyring signing:
 * the tar and its headers, a digest written for the export whose writers' lengths bound the segments,
 * who may export (scope `read`; a session-bound token only its session; another tenant's session is the
 * same 404 as a missing one), the per-token replay slot it holds while it streams, and HEAD writing
 * nothing. End-to-end checks through the CLI and the verifier are in test/e2e/export-verify.test.ts.
 */
import { mkdtempSync, readFileSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateSession } from '../../bench/gen.js';
import { LocalKeyring } from '../../lib/audit/local-keyring.js';
import { type BundleManifest, SignedDigest } from '../../lib/audit/schemas.js';
import { listSegments } from '../../lib/log/index.js';
import { untar } from '../support/export-bundle.js';
import { expectError, request, stalledReader } from '../support/http.js';
import { mint, useServer } from '../support/server.js';
import { storedSegmentPath } from '../support/stored.js';

const { keyring } = LocalKeyring.open(mkdtempSync(join(tmpdir(), 'hansard-export-keys-')));
const srv = useServer({
  tenants: ['acme', 'globex'],
  tokens: {
    reader: ['read'],
    ingest: ['ingest'],
    board: ['board'],
    globex: { tenant: 'globex', scopes: ['read', 'ingest'] },
  },
  deps: { signer: keyring, limits: { maxConcurrentReplays: 1 } },
  // the data_loss case below is answered 500 on purpose
  mayLog: /^answered 500 data_loss/,
});

/** Uploads every segment of `dir` in chunks of whole lines of about `size` bytes. */
async function uploadDir(dir: string, sid: string, token: string, size = 2 * 1024 * 1024): Promise<void> {
  for (const { w, path } of listSegments(dir)) {
    const bytes = readFileSync(path);
    let offset = 0;
    while (offset < bytes.length) {
      let end = Math.min(bytes.length, offset + size);
      end = bytes.lastIndexOf(0x0a, end - 1) + 1;
      const a = await request(srv, 'POST', `/v1/sessions/${sid}/writers/${w}/chunks?offset=${offset}`, {
        token,
        body: bytes.subarray(offset, end),
      });
      expect(a.status, a.text).toBe(201);
      offset = end;
    }
  }
}

let small: { sid: string; dir: string };
let big: { sid: string };

beforeAll(async () => {
  const dir = await generateSession(srv.workDir, 300, 3);
  small = { sid: dir.split('/').pop()!, dir };
  await uploadDir(dir, small.sid, srv.tenant.admin, 8 * 1024);
  // ~12 MB: more than loopback's socket buffers, so a reader that stops reading holds its export open.
  const bigDir = await generateSession(srv.workDir, 40_000, 2);
  big = { sid: bigDir.split('/').pop()! };
  await uploadDir(bigDir, big.sid, srv.tenant.admin);
}, 120_000);

const exportPath = (sid: string) => `/v1/sessions/${sid}/export`;

describe('GET /v1/sessions/{sid}/export', () => {
  it('streams a tar of the segments, every digest and the keys, manifest last, headed by a new export digest', async () => {
    const res = await request(srv, 'GET', exportPath(small.sid), { token: srv.tokens.reader });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-tar');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${small.sid}.tar"`);
    const entries = await untar(res.bytes);
    const names = [...entries.keys()];
    expect(names.at(-1)).toBe(`${small.sid}/manifest.json`);
    const manifest = JSON.parse(entries.get(`${small.sid}/manifest.json`)!.toString()) as BundleManifest;
    expect(manifest.sid).toBe(small.sid);
    expect(manifest.tenant).toBe('acme');
    expect(String(manifest.head.seq)).toBe(res.headers.get('hansard-head-seq'));
    expect(manifest.head.sha256).toBe(res.headers.get('hansard-head-sha256'));
    // Every digest from 1 to the head, the head written for this export and attesting every writer whole.
    expect(manifest.digests.map((d) => d.seq)).toEqual(
      Array.from({ length: manifest.head.seq }, (_, i) => i + 1),
    );
    const head = SignedDigest.parse(
      JSON.parse(entries.get(`${small.sid}/${manifest.digests.at(-1)!.path}`)!.toString()),
    );
    expect(head.reason).toBe('export');
    const segments = listSegments(small.dir);
    expect(head.writers.map((w) => w.w).sort()).toEqual(segments.map((s) => s.w).sort());
    for (const { w, path } of segments) {
      const local = readFileSync(path);
      expect(entries.get(`${small.sid}/segments/${w}.jsonl`)!.equals(local)).toBe(true);
      expect(head.writers.find((x) => x.w === w)!.length).toBe(local.length);
    }
    expect(manifest.keys.map((k) => k.key_id)).toEqual((await keyring.publicKeys()).map((k) => k.key_id));
    // A second export with nothing changed ends with the same head: no digest is written for it (issue 15
    // attack digests-post-flood); a chunk since the head makes a new one (test/http/export-fresh.test.ts).
    const again = await request(srv, 'GET', exportPath(small.sid), { token: srv.tokens.reader });
    expect(again.status, again.text).toBe(200);
    expect(Number(again.headers.get('hansard-head-seq'))).toBe(manifest.head.seq);
    expect(again.headers.get('hansard-head-sha256')).toBe(manifest.head.sha256);
  });

  it("answers another tenant's session exactly as a missing one (404), and 403 without scope read", async () => {
    const theirs = await request(srv, 'GET', exportPath(small.sid), { token: srv.tokens.globex });
    const missing = await request(srv, 'GET', exportPath('s_01M8QD00000000000000000000'), {
      token: srv.tokens.globex,
    });
    expectError(srv, theirs, 404, 'not_found');
    expect(theirs.text.replaceAll(small.sid, 'SID')).toBe(
      missing.text.replaceAll('s_01M8QD00000000000000000000', 'SID'),
    );
    for (const token of [srv.tokens.ingest, srv.tokens.board]) {
      const err = expectError(
        srv,
        await request(srv, 'GET', exportPath(small.sid), { token }),
        403,
        'forbidden',
      );
      expect(err.details).toMatchObject({ required: ['read'] });
    }
    expectError(srv, await request(srv, 'GET', exportPath('s_bad')), 401);
    expectError(srv, await request(srv, 'GET', exportPath('not-an-id'), { token: srv.tokens.reader }), 400);
  });

  it('a session-bound token exports its own session only', async () => {
    const bound = await mint(srv, 'acme', ['read'], small.sid);
    expect((await request(srv, 'GET', exportPath(small.sid), { token: bound })).status).toBe(200);
    const other = await request(srv, 'GET', exportPath(big.sid), { token: bound });
    expectError(srv, other, 404, 'not_found');
  });

  it('HEAD answers the headers and writes no digest', async () => {
    const before = await srv.stores.digests.listDigests('acme', small.sid);
    const res = await request(srv, 'HEAD', exportPath(small.sid), { token: srv.tokens.reader });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-tar');
    expect(await srv.stores.digests.listDigests('acme', small.sid)).toEqual(before);
  });

  it('a segment holding less than the digest attests: 500 data_loss naming it, before any byte', async () => {
    const dir = await generateSession(srv.workDir, 40, 2);
    const sid = dir.split('/').pop()!;
    await uploadDir(dir, sid, srv.tenant.admin);
    const { w } = listSegments(dir)[1]!;
    const path = storedSegmentPath(srv, 'acme', sid, w);
    const length = readFileSync(path).length;
    truncateSync(path, length - 10);
    const res = await request(srv, 'GET', exportPath(sid), { token: srv.tokens.reader });
    const err = expectError(srv, res, 500, 'data_loss');
    expect(err.details).toMatchObject({ w, range: { start: length - 10, end: length } });
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
  });

  it('holds a replay slot of its token while it streams (429 too_many_replays past the cap)', async () => {
    const token = await mint(srv, 'acme', ['read']);
    const held = await stalledReader(srv, exportPath(big.sid), token);
    try {
      expect(held.status).toBe(200);
      const replay = await request(srv, 'GET', `/v1/sessions/${big.sid}/replay?raw=1`, { token });
      expectError(srv, replay, 429, 'too_many_replays');
      const second = await request(srv, 'GET', exportPath(small.sid), { token });
      expectError(srv, second, 429, 'too_many_replays');
      expect(second.headers.get('retry-after')).toBe('5');
    } finally {
      held.drop();
    }
    // Given back once the reader is gone.
    let after = 429;
    for (let i = 0; i < 100 && after === 429; i++) {
      after = (await request(srv, 'GET', exportPath(small.sid), { token })).status;
      if (after === 429) await new Promise((r) => setTimeout(r, 20));
    }
    expect(after).toBe(200);
  }, 30_000);
});
