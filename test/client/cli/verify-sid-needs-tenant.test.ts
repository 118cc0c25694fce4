/**
 * `hansard verify --digests --sid` needs `--tenant` (issue 15 attack 2): session ids are chosen by the
 * uploader and unique only within a tenant, and the deployment's key signs every tenant's digests, so a
 * sid alone names no one session. Without --tenant: exit 2, nothing verified, the message says why and
 * quotes the tenant the bundle states; with it the check runs (exit 0 for the right names, 1 otherwise).
 * A real bundle (packed as the export route packs it), the CLI in process.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSession, partsOf, type TestSession, writeBundle } from '../../support/audit-bundle.js';
import { runHansard } from '../../support/cli.js';
import { tmpDirs } from '../../support/tmp.js';

const tmp = tmpDirs('hansard-verify-sid-tenant-');
let dir: string;
let bundle: string;
let pem: string;
let s: TestSession;

beforeAll(async () => {
  dir = tmp.make();
  s = await buildSession();
  bundle = await writeBundle(partsOf(s), join(dir, 's.tar'));
  pem = join(dir, 'key.pem');
  writeFileSync(pem, s.key.info.public_key);
});

const verify = (...args: string[]) =>
  runHansard(['verify', '--digests', bundle, '--public-key', pem, ...args], { cwd: dir });

describe('verify --digests --sid without --tenant', () => {
  it("is refused with exit 2 naming the bundle's tenant, even when the sid is the bundle's", async () => {
    const r = await verify('--sid', s.sid);
    expect(r.code, r.out).toBe(2);
    expect(r.out).not.toMatch(/verified/);
    expect(r.err).toContain('--sid needs --tenant: session ids are unique only within a tenant');
    expect(r.err).toContain(`the bundle says it is of tenant ${s.tenant}`);
    // --json changes nothing: no report is printed
    const j = await verify('--sid', s.sid, '--json');
    expect(j.code).toBe(2);
    expect(j.out).toBe('');
  });

  it('with --tenant: the right names verify (exit 0), another tenant is bundle_other_session (exit 1)', async () => {
    const right = await verify('--tenant', s.tenant, '--sid', s.sid);
    expect(right.code, right.out).toBe(0);
    expect(right.out).toMatch(new RegExp(`^verified: .*; session ${s.sid} of tenant ${s.tenant}$`, 'm'));
    const other = await verify('--tenant', 'globex', '--sid', s.sid);
    expect(other.code, other.out).toBe(1);
    expect(other.out).toMatch(
      new RegExp(
        `^error\\s+bundle_other_session\\s+bundle: the bundle is of session ${s.sid} of tenant ${s.tenant}, not of ${s.sid} of tenant globex`,
        'm',
      ),
    );
  });

  it('--tenant alone still checks the tenant, and neither still verifies (the closing line names both)', async () => {
    expect((await verify('--tenant', s.tenant)).code).toBe(0);
    expect((await verify('--tenant', 'globex')).code).toBe(1);
    const none = await verify();
    expect(none.code).toBe(0);
    expect(none.out).toContain(`session ${s.sid} of tenant ${s.tenant}`);
  });
});
