/**
 * Issue 15 attack: digest files that are not the bytes the server signed still verify. docs/audit.md says
 * each digest is stored as its RFC 8785 canonical JSON; the verifier parses a digest file with JSON.parse
 * and a zod object that drops unknown keys, then checks the signature over the re-canonicalised parse. So
 * a digest file may carry duplicate keys (JSON.parse keeps the last; parsers that keep the first, or
 * that refuse duplicates, read another digest), unsigned extra fields ("redacted_by_operator"), `1.0`,
 * `1e0` or `\u0041`-escaped text, and `hansard verify --digests` says "verified" for the bundle
 * (the unsigned manifest is updated to the new file's SHA-256).
 *
 * Real server on loopback signing with a LocalKeyring, the real export, the CLI.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateSession } from '../../bench/gen.js';
import { LocalKeyring } from '../../lib/audit/local-keyring.js';
import type { BundleManifest } from '../../lib/audit/schemas.js';
import { listSegments } from '../../lib/log/index.js';
import { runHansard } from '../support/cli.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const { keyring } = LocalKeyring.open(mkdtempSync(join(tmpdir(), 'hansard-attack-canon-keys-')));
const srv = useServer({ tokens: { reader: ['read'] }, deps: { signer: keyring } });

let sid: string;

beforeAll(async () => {
  const dir = await generateSession(srv.workDir, 40, 1);
  sid = dir.split('/').pop()!;
  for (const { w, path } of listSegments(dir)) {
    const a = await request(srv, 'POST', `/v1/sessions/${sid}/writers/${w}/chunks?offset=0`, {
      token: srv.tenant.admin,
      body: readFileSync(path),
    });
    expect(a.status, a.text).toBe(201);
  }
}, 60_000);

describe('issue 15 attack: non-canonical digest files', () => {
  it('a digest file with a duplicate "chunks" key and an unsigned field is not verified', async () => {
    const res = await fetch(`${srv.url}/v1/sessions/${sid}/export`, {
      headers: { authorization: `Bearer ${srv.tokens.reader}` },
    });
    expect(res.status).toBe(200);
    const work = mkdtempSync(join(tmpdir(), 'hansard-attack-canon-'));
    const extract = tar.extract();
    Readable.from([Buffer.from(await res.arrayBuffer())]).pipe(extract as never);
    for await (const entry of extract) {
      const parts: Buffer[] = [];
      for await (const b of entry) parts.push(b as Buffer);
      const target = join(work, entry.header.name);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, Buffer.concat(parts));
    }
    const root = join(work, sid);
    const manifestPath = join(root, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as BundleManifest;
    const entry = manifest.digests[0]!;
    const file = join(root, entry.path);
    const canonical = readFileSync(file, 'utf8');
    // A reader that keeps the first "chunks" sees none; JSON.parse keeps the signed one.
    const edited = canonical
      .replace('{', '{"chunks":[],"redacted_by_operator":true,')
      .replace(`"seq":${entry.seq},`, `"seq":${entry.seq}.0,`);
    expect(edited).not.toBe(canonical);
    writeFileSync(file, edited);
    entry.sha256 = createHash('sha256').update(edited).digest('hex');
    writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
    const keys = join(work, 'keys.json');
    writeFileSync(keys, (await request(srv, 'GET', '/v1/keys')).text);

    const r = await runHansard(['verify', '--digests', root, '--public-key', keys], { cwd: work });
    // On the code under attack: exit 0, "verified: …".
    expect(r.out).not.toMatch(/^verified:/m);
    expect(r.code).toBe(1);
  }, 60_000);
});
