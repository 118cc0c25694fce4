/**
 * When an export signs a digest (issue 15 attack digests-post-flood, docs/audit.md): `POST
 * /v1/sessions/{sid}/digests` and `GET …/export` without `head` write an `export` digest only when it adds
 * something: the session has none, a writer grew, ended or was added since the head, or the head is
 * older than `exportMinAgeSeconds` (60 s). Otherwise the head is answered as it is (200, `fresh: false`;
 * the export ends with it). A chunk arriving after the head is attested at once, so the bundle covers
 * every byte stored when it was asked for; concurrent callers after one change store one digest.
 * Real server on loopback over real files, a LocalKeyring, and a clock the test moves.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalKeyring } from '../../lib/audit/local-keyring.js';
import { type BundleManifest, SignedDigest } from '../../lib/audit/schemas.js';
import { untar } from '../support/export-bundle.js';
import { request } from '../support/http.js';
import { writeSession } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk } from '../support/stored.js';

const { keyring } = LocalKeyring.open(mkdtempSync(join(tmpdir(), 'hansard-export-fresh-keys-')));
/** How far the server's clock is ahead of the real one, in ms. */
let ahead = 0;
const srv = useServer({
  tokens: { reader: ['read'] },
  deps: { signer: keyring, now: () => new Date(Date.now() + ahead) },
});

const digestsPath = (sid: string) => `/v1/sessions/${sid}/digests`;
const storedDigests = (sid: string) =>
  readdirSync(join(srv.dataDir, 'tenants', srv.tenant.name, 'sessions', sid, 'digests')).length;
const post = (sid: string) => request(srv, 'POST', digestsPath(sid), { token: srv.tokens.reader });

describe('an export digest is written only when it adds something', () => {
  it('answers the head while nothing changed; a chunk after the head is attested at once and exported', async () => {
    const seg = writeSession(srv.workDir);
    const parts = [seg.lines.slice(0, 3), seg.lines.slice(3, 6), seg.lines.slice(6)].map((l) =>
      Buffer.concat(l),
    );
    let offset = 0;
    const upload = async (part: Buffer) => {
      const a = await postChunk(srv, srv.tenant.admin, seg.sid, seg.w, offset, part);
      expect(a.status, a.text).toBe(201);
      offset += part.length;
    };
    await upload(parts[0]!);

    const made = await post(seg.sid);
    expect(made.status, made.text).toBe(201);
    expect(made.json.fresh).toBe(true);
    const n = made.json.seq as number;
    const stored = storedDigests(seg.sid);
    // Nothing changed: the same head, nothing stored.
    const again = await post(seg.sid);
    expect(again.status, again.text).toBe(200);
    expect(again.json).toEqual({ ...made.json, fresh: false });
    expect(storedDigests(seg.sid)).toBe(stored);

    // A chunk after the head: a new digest now, no minimum age to wait out.
    await upload(parts[1]!);
    const next = await post(seg.sid);
    expect(next.status, next.text).toBe(201);
    expect(next.json).toMatchObject({ seq: n + 1, fresh: true });

    // Another chunk, then an export without head: its head is a digest written for it, covering it.
    await upload(parts[2]!);
    const res = await request(srv, 'GET', `/v1/sessions/${seg.sid}/export`, { token: srv.tokens.reader });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('hansard-head-seq')).toBe(String(n + 2));
    const entries = await untar(res.bytes);
    const manifest = JSON.parse(entries.get(`${seg.sid}/manifest.json`)!.toString()) as BundleManifest;
    expect(manifest.head.seq).toBe(n + 2);
    expect(entries.get(`${seg.sid}/segments/${seg.w}.jsonl`)!.equals(seg.bytes)).toBe(true);
    const head = SignedDigest.parse(
      JSON.parse(entries.get(`${seg.sid}/${manifest.digests.at(-1)!.path}`)!.toString()),
    );
    expect(head).toMatchObject({ seq: n + 2, reason: 'export' });
    expect(head.writers).toEqual([
      expect.objectContaining({ w: seg.w, length: seg.bytes.length, ended: true }),
    ]);
    expect(head.chunks.map((c) => c.offset)).toEqual([parts[0]!.length + parts[1]!.length]);
    // And the export after it, nothing changed, ends with the same head.
    const same = await request(srv, 'GET', `/v1/sessions/${seg.sid}/export`, { token: srv.tokens.reader });
    expect(same.headers.get('hansard-head-seq')).toBe(String(n + 2));
    expect(storedDigests(seg.sid)).toBe(stored + 2);
  });

  it('re-signs an unchanged head once it is older than the minimum age (60 s), not before', async () => {
    const seg = writeSession(srv.workDir);
    expect((await postChunk(srv, srv.tenant.admin, seg.sid, seg.w, 0, seg.bytes)).status).toBe(201);
    try {
      const made = await post(seg.sid);
      expect(made.status, made.text).toBe(201);
      ahead = 59_000;
      const young = await post(seg.sid);
      expect(young.status, young.text).toBe(200);
      expect(young.json).toMatchObject({ seq: made.json.seq, fresh: false });
      ahead = 61_000;
      const old = await post(seg.sid);
      expect(old.status, old.text).toBe(201);
      expect(old.json).toMatchObject({ seq: made.json.seq + 1, fresh: true });
      const again = await post(seg.sid);
      expect(again.json).toMatchObject({ seq: made.json.seq + 1, fresh: false });
    } finally {
      ahead = 0;
    }
  });

  it('30 concurrent POSTs after a writer joined store one digest, and all answer it', async () => {
    const seg = writeSession(srv.workDir);
    expect((await postChunk(srv, srv.tenant.admin, seg.sid, seg.w, 0, seg.bytes)).status).toBe(201);
    const first = await post(seg.sid);
    expect(first.status, first.text).toBe(201);
    const stored = storedDigests(seg.sid);
    // A second writer of the same session: the change is a writer the head does not list.
    const other = writeSession(srv.workDir, { sid: seg.sid, agent: 'second-agent' });
    expect((await postChunk(srv, srv.tenant.admin, seg.sid, other.w, 0, other.bytes)).status).toBe(201);

    const answers = await Promise.all(Array.from({ length: 30 }, () => post(seg.sid)));
    for (const a of answers) expect([200, 201], a.text).toContain(a.status);
    // At most one says it signed (none when another caller adopted its digest before it moved the head).
    expect(answers.filter((a) => a.status === 201).length).toBeLessThanOrEqual(1);
    expect(new Set(answers.map((a) => a.json.seq))).toEqual(new Set([first.json.seq + 1]));
    expect(storedDigests(seg.sid)).toBe(stored + 1);
  });
});
