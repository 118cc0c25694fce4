/**
 * Issue 15 attack: a genuine bundle of another session (or another tenant of the deployment) passed off
 * as the one the auditor asked for verifies, and nothing the auditor reads says which session it is. The
 * text report is "verified: N digests, N chunks, N bytes as of T": no sid, no tenant, and
 * `verify --digests` takes no expected sid. docs/audit.md's three commands name the bundle after the sid
 * (`s_01KZ….tar.gz`), but the file name is whatever the sender chose.
 *
 * Real server on loopback with two tenants, the real exports, the CLI.
 */
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateSession } from '../../bench/gen.js';
import { LocalKeyring } from '../../lib/audit/local-keyring.js';
import { listSegments } from '../../lib/log/index.js';
import { runHansard } from '../support/cli.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const { keyring } = LocalKeyring.open(mkdtempSync(join(tmpdir(), 'hansard-attack-subst-keys-')));
const srv = useServer({
  tenants: ['acme', 'globex'],
  tokens: { reader: ['read'], globex: { tenant: 'globex', scopes: ['read', 'ingest'] } },
  deps: { signer: keyring },
});

async function upload(token: string): Promise<string> {
  const dir = await generateSession(srv.workDir, 40, 1);
  const sid = dir.split('/').pop()!;
  for (const { w, path } of listSegments(dir)) {
    const a = await request(srv, 'POST', `/v1/sessions/${sid}/writers/${w}/chunks?offset=0`, {
      token,
      body: readFileSync(path),
    });
    expect(a.status, a.text).toBe(201);
  }
  return sid;
}

let wanted: string;
let other: string;

beforeAll(async () => {
  wanted = await upload(srv.tenant.admin);
  other = await upload(srv.tokens.globex);
}, 60_000);

describe("issue 15 attack: another session's bundle", () => {
  it('the report names the session and tenant a bundle attests', async () => {
    const work = mkdtempSync(join(tmpdir(), 'hansard-attack-subst-'));
    const res = await fetch(`${srv.url}/v1/sessions/${other}/export`, {
      headers: { authorization: `Bearer ${srv.tokens.globex}` },
    });
    expect(res.status).toBe(200);
    const real = join(work, 'other.tar');
    writeFileSync(real, Buffer.from(await res.arrayBuffer()));
    // handed over under the name of the session the auditor asked for
    const passedOff = join(work, `${wanted}.tar`);
    copyFileSync(real, passedOff);
    const keys = join(work, 'keys.json');
    writeFileSync(keys, (await request(srv, 'GET', '/v1/keys')).text);

    const r = await runHansard(['verify', '--digests', passedOff, '--public-key', keys], { cwd: work });
    expect(r.code).toBe(0);
    // On the code under attack: "verified: 1 digest, 1 chunk, … bytes as of …", neither named.
    expect(r.out).toContain(other);
    expect(r.out).toContain('globex');
  }, 60_000);

  it('--sid / --tenant name the session asked for: a bundle of another is bundle_other_session, exit 1', async () => {
    const work = mkdtempSync(join(tmpdir(), 'hansard-attack-subst-sid-'));
    const res = await fetch(`${srv.url}/v1/sessions/${other}/export`, {
      headers: { authorization: `Bearer ${srv.tokens.globex}` },
    });
    expect(res.status).toBe(200);
    const passedOff = join(work, `${wanted}.tar`);
    writeFileSync(passedOff, Buffer.from(await res.arrayBuffer()));
    const keys = join(work, 'keys.json');
    writeFileSync(keys, (await request(srv, 'GET', '/v1/keys')).text);
    const run = (...extra: string[]) =>
      runHansard(['verify', '--digests', passedOff, '--public-key', keys, ...extra], { cwd: work });

    const bySid = await run('--tenant', 'acme', '--sid', wanted);
    expect(bySid.code, bySid.err).toBe(1);
    expect(bySid.out).toMatch(
      new RegExp(
        `^error\\s+bundle_other_session\\s+bundle: the bundle is of session ${other} of tenant globex, not of ${wanted}`,
        'm',
      ),
    );
    expect(bySid.out).toMatch(/^NOT verified: 1 error; /m);
    const byTenant = await run('--sid', other, '--tenant', 'acme');
    expect(byTenant.code).toBe(1);
    expect(byTenant.out).toMatch(/bundle_other_session/);
    const json = await run('--tenant', 'acme', '--sid', wanted, '--json');
    expect(JSON.parse(json.out)).toMatchObject({ ok: false, sid: other, tenant: 'globex' });
    // the right names: verified
    const right = await run('--sid', other, '--tenant', 'globex');
    expect(right.code, right.out).toBe(0);
  }, 60_000);
});
