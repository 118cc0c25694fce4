/**
 * What `hansard verify --digests` says (issue 15.3): on "NOT verified", a hint on stderr by kind of
 * finding (an unknown key, a digest due by --at, tampering); the verdict with no verified digest says so;
 * the manifest's segment mismatch, a bundle without keys and an empty key file are named plainly.
 * Real bundles (packed, extracted and altered with the system tar), the CLI in process.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSession, makeKey, partsOf, type TestSession, writeBundle } from '../support/audit-bundle.js';
import { runHansard } from '../support/cli.js';
import { tmpDirs } from '../support/tmp.js';

const tmp = tmpDirs('hansard-verify-verdict-');
let dir: string;
let bundle: string;
let pem: string;
let s: TestSession;

const UNKNOWN_HINT =
  "hint: fetch the deployment's current keys again (GET /v1/keys) and pass them with --public-key; if the key is still unknown the bundle was not signed by this deployment";
const AT_HINT = 'hint: if you downloaded the bundle earlier, pass that time with --at';
const EVIDENCE_HINT = 'hint: keep this bundle as evidence and export the session again to compare';

beforeAll(async () => {
  dir = tmp.make();
  s = await buildSession();
  bundle = await writeBundle(partsOf(s), join(dir, 's.tar'));
  pem = join(dir, 'key.pem');
  writeFileSync(pem, s.key.info.public_key);
});

const verify = (...args: string[]) => runHansard(['verify', '--digests', ...args], { cwd: dir });

/** The bundle extracted to a fresh directory, with one segment file changed by `alter`. */
function altered(name: string, alter: (segment: string) => void): string {
  const ex = join(dir, name);
  mkdirSync(ex);
  execFileSync('tar', ['xf', bundle, '-C', ex]);
  alter(join(ex, s.sid, 'segments', `${[...s.segments.keys()][0]}.jsonl`));
  return ex;
}

describe('verify --digests: what to do next', () => {
  it('an unknown key: the hint to fetch the keys again, the ids given named, "no digest verified"', async () => {
    const other = makeKey();
    const otherPem = join(dir, 'other.pem');
    writeFileSync(otherPem, other.info.public_key);
    const r = await verify(bundle, '--public-key', otherPem);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      `digest seq 1 is signed by key ${s.key.info.key_id}, which is not among the keys given (${other.info.key_id})`,
    );
    expect(r.out).toMatch(
      /^NOT verified: 4 errors; 4 digests, 12 chunks, \d+ bytes; no digest verified; session /m,
    );
    expect(r.out).not.toContain('as of no digest');
    expect(r.err.trimEnd().split('\n')).toEqual([UNKNOWN_HINT]);
  });

  it('a digest due by --at: the hint to pass the download time, and no tampering hint', async () => {
    const r = await verify(bundle, '--public-key', pem, '--at', '2026-11-30T11:30:00Z');
    expect(r.code).toBe(1);
    expect(r.err.trimEnd().split('\n')).toEqual([AT_HINT]);
  });

  it('a modified chunk: keep the bundle as evidence; the manifest says the SHA-256 differs (same size)', async () => {
    const ex = altered('modified', (p) => {
      const b = readFileSync(p);
      b[10] = b[10] === 0x41 ? 0x42 : 0x41;
      writeFileSync(p, b);
    });
    const r = await verify(ex, '--public-key', pem);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/chunk_modified/);
    expect(r.out).toMatch(/\.jsonl: its SHA-256 differs from the manifest's \(both \d+ bytes\)$/m);
    expect(r.out).not.toContain('with another SHA-256');
    expect(r.err.trimEnd().split('\n')).toEqual([EVIDENCE_HINT]);
  });

  it('a segment of another size than the manifest states: both sizes named', async () => {
    const ex = altered('longer', (p) => appendFileSync(p, '{"v":3}\n'));
    const size = [...s.segments.values()][0]!.length;
    const r = await verify(ex, '--public-key', pem);
    expect(r.out).toContain(`.jsonl is ${size + 8} bytes, not the ${size} the manifest states`);
  });

  it('verified: no hint', async () => {
    const r = await verify(bundle, '--public-key', pem);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
  });
});

describe('verify --digests: plain words', () => {
  it('a bundle with no key and no --public-key: "the bundle holds no key", not "own 0 keys"', async () => {
    const bare = await writeBundle(partsOf(s, { keys: [] }), join(dir, 'bare.tar'));
    const r = await verify(bare);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'no trusted key given and the bundle holds no key: no signature could be checked',
    );
    expect(r.out).not.toContain('own 0 keys');
  });

  it('an empty key file: "empty.json is empty" (exit 2)', async () => {
    writeFileSync(join(dir, 'empty.json'), '');
    const r = await verify(bundle, '--public-key', join(dir, 'empty.json'));
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${join(dir, 'empty.json')} is empty`);
    expect(r.err).not.toContain('neither a PEM');
  });
});
