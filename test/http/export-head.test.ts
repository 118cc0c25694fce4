/**
 * Exporting in two steps (issue 15.3, docs/audit.md "Large sessions on AWS") over real HTTP on loopback
 * with a LocalKeyring: `POST /v1/sessions/{sid}/digests` signs an export digest now and answers its seq;
 * `GET …/export?head=N` bundles exactly up to stored digest N, writing none, even after more chunks and
 * digests arrived; the bundle verifies offline (`hansard verify --digests`, in-process CLI). A digest
 * that is not stored answers 404 `digest_not_found`, a malformed head 400. Who may call the new route is
 * in test/http/isolation.test.ts; the AWS functions in test/functions/export-replay.test.ts.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalKeyring } from '../../lib/audit/local-keyring.js';
import { type BundleManifest, SignedDigest } from '../../lib/audit/schemas.js';
import { newId } from '../../lib/log/index.js';
import { runHansard } from '../support/cli.js';
import { untar } from '../support/export-bundle.js';
import { expectError, request } from '../support/http.js';
import { writeSession } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk } from '../support/stored.js';

const { keyring } = LocalKeyring.open(mkdtempSync(join(tmpdir(), 'hansard-export-head-keys-')));
const srv = useServer({ tokens: { reader: ['read'], ingest: ['ingest'] }, deps: { signer: keyring } });

const digestsPath = (sid: string) => `/v1/sessions/${sid}/digests`;
const exportPath = (sid: string, q = '') => `/v1/sessions/${sid}/export${q}`;

describe('POST …/digests, then GET …/export?head=N', () => {
  it('bundles exactly up to digest N after more chunks and digests arrived, and the bundle verifies', async () => {
    const seg = writeSession(srv.workDir);
    const first = Buffer.concat(seg.lines.slice(0, 3));
    const rest = Buffer.concat(seg.lines.slice(3));
    const up = await postChunk(srv, srv.tenant.admin, seg.sid, seg.w, 0, first);
    expect(up.status, up.text).toBe(201);

    const made = await request(srv, 'POST', digestsPath(seg.sid), { token: srv.tokens.reader });
    expect(made.status, made.text).toBe(201);
    expect(Object.keys(made.json).sort()).toEqual(['at', 'fresh', 'seq', 'sha256']);
    expect(made.json.fresh).toBe(true);
    const n = made.json.seq as number;
    expect(n).toBeGreaterThanOrEqual(1);
    expect(made.json.sha256).toMatch(/^[0-9a-f]{64}$/);

    // More bytes and a later digest: the bundle of head=N must not see either.
    const more = await postChunk(srv, srv.tenant.admin, seg.sid, seg.w, first.length, rest);
    expect(more.status, more.text).toBe(201);
    const later = await request(srv, 'POST', digestsPath(seg.sid), { token: srv.tokens.reader });
    expect(later.json.seq).toBe(n + 1);

    const res = await request(srv, 'GET', exportPath(seg.sid, `?head=${n}`), { token: srv.tokens.reader });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('hansard-head-seq')).toBe(String(n));
    expect(res.headers.get('hansard-head-sha256')).toBe(made.json.sha256);
    const entries = await untar(res.bytes);
    const manifest = JSON.parse(entries.get(`${seg.sid}/manifest.json`)!.toString()) as BundleManifest;
    expect(manifest.head).toEqual({ seq: n, sha256: made.json.sha256 });
    expect(manifest.digests.map((d) => d.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    const head = SignedDigest.parse(
      JSON.parse(entries.get(`${seg.sid}/${manifest.digests.at(-1)!.path}`)!.toString()),
    );
    expect(head.reason).toBe('export');
    expect(entries.get(`${seg.sid}/segments/${seg.w}.jsonl`)!.equals(first)).toBe(true);
    // No digest was written by the GET: the head is still n + 1, which covers every chunk, so the POST
    // answers it as it is (200, fresh false) instead of signing another (issue 15 attack digests-post-flood).
    const after = await request(srv, 'POST', digestsPath(seg.sid), { token: srv.tokens.reader });
    expect(after.status, after.text).toBe(200);
    expect(after.json).toMatchObject({ seq: n + 1, sha256: later.json.sha256, fresh: false });

    const dir = mkdtempSync(join(srv.workDir, 'bundle-'));
    const file = join(dir, 'head.tar');
    writeFileSync(file, res.bytes);
    const keys = join(dir, 'keys.json');
    writeFileSync(keys, (await request(srv, 'GET', '/v1/keys')).text);
    const v = await runHansard(['verify', '--digests', file, '--public-key', keys], { cwd: dir });
    expect(v.code, `${v.out}${v.err}`).toBe(0);
    expect(v.out).toMatch(new RegExp(`^verified: ${n} digests?`, 'm'));
    expect(readFileSync(file).length).toBe(res.bytes.length);
  });

  it('answers 404 digest_not_found for a digest not stored, and 400 for a malformed head', async () => {
    const seg = writeSession(srv.workDir);
    expect((await postChunk(srv, srv.tenant.admin, seg.sid, seg.w, 0, seg.bytes)).status).toBe(201);
    // No digest yet: head=1 does not exist.
    const none = await request(srv, 'GET', exportPath(seg.sid, '?head=1'), { token: srv.tokens.reader });
    expectError(srv, none, 404, 'digest_not_found');
    expect(none.json.error.message).toContain(`POST /v1/sessions/${seg.sid}/digests`);
    const made = await request(srv, 'POST', digestsPath(seg.sid), { token: srv.tokens.reader });
    expect(made.status).toBe(201);
    const past = await request(srv, 'GET', exportPath(seg.sid, `?head=${made.json.seq + 1}`), {
      token: srv.tokens.reader,
    });
    expectError(srv, past, 404, 'digest_not_found');
    for (const bad of ['0', '-1', 'x', '1e3', '0x1', '1.5', ' 1', '']) {
      const a = await request(srv, 'GET', exportPath(seg.sid, `?head=${encodeURIComponent(bad)}`), {
        token: srv.tokens.reader,
      });
      expectError(srv, a, 400, 'bad_request');
    }
    // A session that does not exist is the plain 404, head or not; without scope read 403.
    expectError(
      srv,
      await request(srv, 'POST', digestsPath(newId('s')), { token: srv.tokens.reader }),
      404,
      'not_found',
    );
    expectError(
      srv,
      await request(srv, 'POST', digestsPath(seg.sid), { token: srv.tokens.ingest }),
      403,
      'forbidden',
    );
  });
});
