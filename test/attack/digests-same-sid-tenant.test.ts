/**
 * Issue 15 attack 2 on `verify --digests --sid` (the round-1 fix for bundle substitution): session ids
 * are chosen by the uploader (`openSession` makes them on the writer's machine), so a user of another
 * tenant of the same deployment can upload a session under the very sid of the one the auditor asked
 * for, with other content, and export it: the server signs it with the deployment's key. docs/audit.md
 * says "Add `--sid s_01KZ…` (and `--tenant T`)"; with `--sid` alone that bundle verifies (exit 0, no
 * warning), though the sid no longer names one session.
 *
 * Real server on loopback with two tenants, the real exports, the CLI.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSession } from '../../bench/gen.js';
import { LocalKeyring } from '../../lib/audit/local-keyring.js';
import { listSegments } from '../../lib/log/index.js';
import { runHansard } from '../support/cli.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const { keyring } = LocalKeyring.open(mkdtempSync(join(tmpdir(), 'hansard-attack2-sid-keys-')));
const srv = useServer({
  tenants: ['acme', 'globex'],
  tokens: { globex: { tenant: 'globex', scopes: ['read', 'ingest'] } },
  deps: { signer: keyring },
});

describe('issue 15 attack 2: the same sid in another tenant', () => {
  it('--sid without --tenant does not verify a same-sid session of another tenant', async () => {
    const dir = await generateSession(srv.workDir, 40, 1);
    const sid = dir.split('/').pop()!;
    for (const { w, path } of listSegments(dir)) {
      const body = readFileSync(path);
      // acme's real session
      const a = await request(srv, 'POST', `/v1/sessions/${sid}/writers/${w}/chunks?offset=0`, {
        token: srv.tenant.admin,
        body,
      });
      expect(a.status, a.text).toBe(201);
      // globex's forgery under the same sid and writer: the same lines with one text changed
      const forged = Buffer.from(body.toString('utf8').replace(/"text":"[^"]*"/, '"text":"forged"'));
      expect(forged.equals(body)).toBe(false);
      const g = await request(srv, 'POST', `/v1/sessions/${sid}/writers/${w}/chunks?offset=0`, {
        token: srv.tokens.globex,
        body: forged,
      });
      expect(g.status, g.text).toBe(201);
    }
    const work = mkdtempSync(join(tmpdir(), 'hansard-attack2-sid-'));
    const res = await fetch(`${srv.url}/v1/sessions/${sid}/export`, {
      headers: { authorization: `Bearer ${srv.tokens.globex}` },
    });
    expect(res.status).toBe(200);
    const passedOff = join(work, `${sid}.tar`);
    writeFileSync(passedOff, Buffer.from(await res.arrayBuffer()));
    const keys = join(work, 'keys.json');
    writeFileSync(keys, (await request(srv, 'GET', '/v1/keys')).text);

    const r = await runHansard(['verify', '--digests', passedOff, '--public-key', keys, '--sid', sid], {
      cwd: work,
    });
    // Was: exit 0, "verified: … session s_… of tenant globex", no warning: the auditor asked for
    // acme's session by the sid they were given and the bundle holds globex's forgery of it.
    const warned = /^warning\s.*tenant/im.test(r.out);
    expect(r.code !== 0 || warned, r.out).toBe(true);
    // Now refused (exit 2): a sid needs its tenant; the message quotes the tenant the bundle states.
    expect(r.code, r.out).toBe(2);
    expect(r.err).toContain('--sid needs --tenant');
    expect(r.err).toContain('the bundle says it is of tenant globex');
    // naming whose session was asked for catches the forgery
    const named = await runHansard(
      ['verify', '--digests', passedOff, '--public-key', keys, '--tenant', 'acme', '--sid', sid],
      { cwd: work },
    );
    expect(named.code, named.out).toBe(1);
    expect(named.out).toMatch(/^error\s+bundle_other_session\s.*of tenant globex, not of .* of tenant acme/m);
  }, 60_000);
});
