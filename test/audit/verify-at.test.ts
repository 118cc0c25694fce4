/**
 * verify --digests --at (issue 15.3): a time before the newest verified digest is a warning
 * (`at_before_digest`: the bundle cannot have been downloaded then); an offset such as +01:00 is read as
 * that offset; a time with no offset is refused (Date would read it in the machine's zone). The session:
 * digests at 10:00–10:15Z, the newest due again by 11:15Z. Real bundles, the CLI in process.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSession, partsOf, writeBundle } from '../support/audit-bundle.js';
import { runHansard } from '../support/cli.js';
import { tmpDirs } from '../support/tmp.js';

const tmp = tmpDirs('hansard-verify-at-');
let dir: string;
let bundle: string;
let pem: string;

beforeAll(async () => {
  dir = tmp.make();
  const s = await buildSession();
  bundle = await writeBundle(partsOf(s), join(dir, 's.tar'));
  pem = join(dir, 'key.pem');
  writeFileSync(pem, s.key.info.public_key);
});

const verify = (...args: string[]) =>
  runHansard(['verify', '--digests', bundle, '--public-key', pem, ...args], { cwd: dir });

describe('verify --digests --at', () => {
  it('before the newest verified digest: a warning naming both times (exit 0), in --json too', async () => {
    const r = await verify('--at', '2026-11-01T00:00:00Z');
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toMatch(
      /^warning\s+at_before_digest\s+digest 4: --at 2026-11-01T00:00:00.000Z is before the newest digest \(seq 4, 2026-11-30T10:15:00.000Z\): the bundle cannot have been downloaded then; check the time/m,
    );
    const j = JSON.parse((await verify('--at', '2026-11-01T00:00:00Z', '--json')).out);
    expect(j.findings.map((f: { code: string }) => f.code)).toEqual(['at_before_digest']);
    const after = await verify('--at', '2026-11-30T10:20:00Z');
    expect(after.out).not.toContain('at_before_digest');
  });

  it('reads a +01:00 offset as such: 12:10+01:00 is before the 11:15Z due time, 12:20+01:00 after', async () => {
    const before = await verify('--at', '2026-11-30T12:10:00+01:00');
    expect(before.code, before.out).toBe(0);
    const late = await verify('--at', '2026-11-30T12:20:00+01:00');
    expect(late.code, late.out).toBe(1);
    expect(late.out).toContain('none in the bundle as of 2026-11-30T11:20:00.000Z');
  });

  it('refuses a time with no offset (exit 2)', async () => {
    const r = await verify('--at', '2026-11-30T10:20:00');
    expect(r.code).toBe(2);
    expect(r.err).toContain('--at 2026-11-30T10:20:00 has no time zone: add Z for UTC');
  });
});
