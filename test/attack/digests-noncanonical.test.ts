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
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BundleManifest } from '../../lib/audit/schemas.js';
import { runHansard } from '../support/cli.js';
import { fetchExport, untarTo, uploadGenerated, useSigningServer } from '../support/export-bundle.js';
import { request } from '../support/http.js';

const { srv } = useSigningServer('hansard-attack-canon-keys-');

let sid: string;

beforeAll(async () => {
  ({ sid } = await uploadGenerated(srv, 40, 1));
}, 60_000);

describe('issue 15 attack: non-canonical digest files', () => {
  it('a digest file with a duplicate "chunks" key and an unsigned field is not verified', async () => {
    const bundle = await fetchExport(srv, sid, srv.tokens.reader);
    const work = mkdtempSync(join(tmpdir(), 'hansard-attack-canon-'));
    await untarTo(bundle, work);
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
