/**
 * Export and offline verification end to end (issue 15.3, docs/audit.md): a real server on loopback
 * signing with a LocalKeyring in its own directory, and the real `hansard` CLI as a child process (from
 * source through tsx): a three-writer session uploaded, exported (`hansard export`), verified with the key
 * from `GET /v1/keys` (`hansard verify --digests`), the bundle's segments replayed byte-identical to the
 * server's replays, the bundle tampered with (a byte of a segment, the newest digest deleted), keys
 * rotated between two digests, chunks ingested while an export streams, and who may not export.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalKeyring } from '../../lib/audit/local-keyring.js';
import { SignedDigest } from '../../lib/audit/schemas.js';
import { openLocalStores } from '../../lib/deploy/local.js';
import { newId } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURE = join(ROOT, 'test/fixtures/multi-writer/s_01M8MB9XXBAS3J6TGHM02TT9G4');
const SID = 's_01M8MB9XXBAS3J6TGHM02TT9G4';

const keysDir = mkdtempSync(join(tmpdir(), 'hansard-e2e-keys-'));
// A data directory of its own (its state database made), as `hansard keys rotate --data` requires one.
await openLocalStores(keysDir).state.close();
const { keyring } = LocalKeyring.open(keysDir);
/** Run once right after the next digest is stored (before its head moves): a chunk arriving mid-export. */
let afterNextDigest: (() => Promise<void>) | null = null;
const srv = useServer({
  stores: (dataDir) => {
    const stores = openLocalStores(dataDir);
    const put = stores.digests.putDigest.bind(stores.digests);
    stores.digests.putDigest = async (...args) => {
      await put(...args);
      const hook = afterNextDigest;
      afterNextDigest = null;
      await hook?.();
    };
    return stores;
  },
  tenants: ['acme', 'globex'],
  tokens: {
    reader: ['read'],
    ingest: ['ingest'],
    globex: { tenant: 'globex', scopes: ['read', 'ingest'] },
  },
  deps: { signer: keyring },
});
let tmp: string;
const children: ChildProcess[] = [];

interface Run {
  code: number | null;
  out: Buffer;
  err: string;
}

/** `hansard ARGS` in its own process (the CLI from source through tsx), against the test server. */
function hansard(args: string[], token?: string): Promise<Run> {
  const main = `const { runCli } = await import(${JSON.stringify(`${ROOT}/lib/client/cli/main.ts`)});
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
process.exitCode = await runCli(process.argv.slice(1), io);`;
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HANSARD_')) env[k] = v;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', main, ...args], {
    cwd: ROOT,
    env: { ...env, NO_COLOR: '1', HANSARD_URL: srv.url, ...(token ? { HANSARD_TOKEN: token } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const out: Buffer[] = [];
  let err = '';
  child.stdout!.on('data', (b: Buffer) => out.push(b));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  return new Promise((done, fail) => {
    child.on('error', fail);
    child.on('close', (code) => done({ code, out: Buffer.concat(out), err }));
  });
}

async function ok(args: string[], token?: string): Promise<Buffer> {
  const r = await hansard(args, token);
  expect(r.code, `hansard ${args.join(' ')}:\n${r.err}`).toBe(0);
  return r.out;
}

/** GET /v1/keys, saved where `--public-key` reads it. */
async function saveKeys(name: string): Promise<string> {
  const res = await request(srv, 'GET', '/v1/keys');
  expect(res.status).toBe(200);
  const path = join(tmp, name);
  writeFileSync(path, res.text);
  return path;
}

/** A note line of writer `w` at `seq` (the fixture's writers end at seq 202). */
function noteLine(w: string, seq: number, text: string): string {
  return `${JSON.stringify({ v: 3, sid: SID, w, seq, id: newId('e'), ts: '2026-11-29T19:08:00.000000Z', mono: 1, type: 'note', author: 'late', text })}\n`;
}

/** Appends `line` to writer `w` at its stored length; answers that length. */
async function append(w: string, line: string): Promise<number> {
  const got = await request(srv, 'GET', `/v1/sessions/${SID}/writers/${w}`, { token: srv.tokens.reader });
  const length = (got.json as { length: number }).length;
  const posted = await request(srv, 'POST', `/v1/sessions/${SID}/writers/${w}/chunks?offset=${length}`, {
    token: srv.tokens.ingest,
    body: line,
  });
  expect(posted.status, posted.text).toBe(201);
  return length;
}

/** A bundle extracted with the system's tar into a fresh directory: `{dir}/{sid}/…`. */
function extract(file: string): string {
  const dir = mkdtempSync(join(tmp, 'x-'));
  execFileSync('tar', ['-xf', file, '-C', dir]);
  return dir;
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'hansard-e2e-export-'));
  cpSync(FIXTURE, join(tmp, SID), { recursive: true });
  await ok(['upload', join(tmp, SID)], srv.tenant.admin);
}, 60_000);

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
  rmSync(keysDir, { recursive: true, force: true });
});

describe('hansard export, then hansard verify --digests offline', { timeout: 90_000 }, () => {
  let bundle: string;
  let headSeq: number;

  it('exports (.tar and .tar.gz) and verifies with the key from GET /v1/keys', async () => {
    bundle = join(tmp, 'bundle.tar');
    const r = JSON.parse(
      (await ok(['export', SID, '--out', bundle, '--json'], srv.tokens.reader)).toString(),
    );
    expect(r).toMatchObject({ file: bundle, sid: SID });
    expect(r.bytes).toBe(readFileSync(bundle).length);
    headSeq = r.head_seq;
    expect(headSeq).toBeGreaterThanOrEqual(1);
    expect(existsSync(`${bundle}.partial`)).toBe(false);
    const keys = await saveKeys('keys.json');
    const v = await hansard(['verify', '--digests', bundle, '--public-key', keys]);
    expect(v.code, `${v.out}\n${v.err}`).toBe(0);
    expect(v.out.toString()).toMatch(/^verified: /m);

    const gz = join(tmp, 'bundle.tar.gz');
    const human = await hansard(['export', SID, '--out', gz], srv.tokens.reader);
    expect(human.code, human.err).toBe(0);
    expect(human.out.toString()).toMatch(new RegExp(`exported ${SID} to .*bundle\\.tar\\.gz`));
    expect(human.err).toMatch(/curl -s .*\/v1\/keys/);
    expect(human.err).toMatch(/hansard verify --digests .*bundle\.tar\.gz --public-key/);
    expect(
      readFileSync(gz)
        .subarray(0, 2)
        .equals(Buffer.from([0x1f, 0x8b])),
    ).toBe(true);
    expect((await hansard(['verify', '--digests', gz, '--public-key', keys])).code).toBe(0);
  });

  it("the merged replay of the bundle's segments is byte-identical to the server's (ndjson and raw)", async () => {
    const segments = join(extract(bundle), SID, 'segments');
    expect(readdirSync(segments).sort()).toEqual(readdirSync(FIXTURE).sort());
    for (const [args, query] of [
      [['--format', 'ndjson'], 'format=ndjson'],
      [['--raw'], 'raw=1'],
    ] as const) {
      const local = await ok(['replay', segments, ...args]);
      const server = await request(srv, 'GET', `/v1/sessions/${SID}/replay?${query}`, {
        token: srv.tokens.reader,
      });
      expect(server.status).toBe(200);
      expect(local.length).toBeGreaterThan(100_000);
      expect(local.equals(server.bytes)).toBe(true);
    }
  });

  it('a modified byte of a segment: exit 1 naming the chunk, its writer and line', async () => {
    const dir = extract(bundle);
    const w = readdirSync(join(dir, SID, 'segments')).sort()[1]!;
    const path = join(dir, SID, 'segments', w);
    const bytes = readFileSync(path);
    const at = bytes.indexOf('"seq":50,');
    bytes[at + 7] = '6'.charCodeAt(0); // seq 50 -> 56, same length
    writeFileSync(path, bytes);
    const v = await hansard([
      'verify',
      '--digests',
      join(dir, SID),
      '--public-key',
      await saveKeys('k.json'),
    ]);
    expect(v.code).toBe(1);
    const out = v.out.toString();
    expect(out).toMatch(new RegExp(`error\\s+chunk_modified\\s+${w.replace('.jsonl', '')} .*line \\d+`));
    expect(out).not.toMatch(/^verified/m);
  });

  it('the newest digest deleted: exit 1 naming that digest as missing', async () => {
    const dir = extract(bundle);
    rmSync(join(dir, SID, 'digests', `${String(headSeq).padStart(9, '0')}.json`));
    const v = await hansard([
      'verify',
      '--digests',
      join(dir, SID),
      '--public-key',
      await saveKeys('k.json'),
    ]);
    expect(v.code).toBe(1);
    expect(v.out.toString()).toMatch(new RegExp(`error\\s+digest_missing\\s+digest ${headSeq}\\b`));
  });

  it('keys rotated between two digests: both verify with the keys served after the rotation', async () => {
    const first = join(tmp, 'before-rotation.tar');
    await ok(['export', SID, '--out', first], srv.tokens.reader);
    const rotated = await hansard(['keys', 'rotate', '--data', keysDir]);
    expect(rotated.code, rotated.err).toBe(0);
    // A chunk since the first export's head: an export of an unchanged session within 60 s answers that
    // head instead of signing another (issue 15 attack digests-post-flood), so the change makes the digest.
    const w = readdirSync(FIXTURE).sort()[1]!.replace('.jsonl', '');
    await append(w, noteLine(w, 203, 'after the rotation'));
    const second = join(tmp, 'after-rotation.tar');
    const r = JSON.parse(
      (await ok(['export', SID, '--out', second, '--json'], srv.tokens.reader)).toString(),
    );
    const dir = join(extract(second), SID);
    const digest = (seq: number) =>
      SignedDigest.parse(
        JSON.parse(readFileSync(join(dir, 'digests', `${String(seq).padStart(9, '0')}.json`), 'utf8')),
      );
    // The last two digests are signed by different keys: the rotation fell between them.
    expect(digest(r.head_seq).key_id).not.toBe(digest(r.head_seq - 1).key_id);
    const keys = JSON.parse(readFileSync(await saveKeys('rotated.json'), 'utf8')) as {
      keys: { key_id: string; retired_at: string | null }[];
    };
    expect(keys.keys.filter((k) => k.retired_at !== null).length).toBeGreaterThanOrEqual(1);
    for (const b of [first, second]) {
      const v = await hansard(['verify', '--digests', b, '--public-key', join(tmp, 'rotated.json')]);
      expect(v.code, v.out.toString()).toBe(0);
    }
  });

  it('chunks ingested during an export are left out, and the bundle still verifies', async () => {
    const w = readdirSync(FIXTURE).sort()[0]!.replace('.jsonl', '');
    // A chunk before the export, so that it signs a digest (an unchanged session's export within 60 s
    // answers the head as it is: issue 15 attack digests-post-flood); the bundle holds it.
    const first = noteLine(w, 203, 'before the export');
    const length = (await append(w, first)) + Buffer.byteLength(first);
    const line = noteLine(w, 204, 'during the export');
    // A chunk lands once the export's digest is stored, before the bundle's segments are read.
    afterNextDigest = async () => {
      await append(w, line);
    };
    const file = join(tmp, 'during.tar');
    await ok(['export', SID, '--out', file], srv.tokens.reader);
    expect(afterNextDigest).toBeNull();
    const seg = readFileSync(join(extract(file), SID, 'segments', `${w}.jsonl`));
    expect(seg.length).toBe(length);
    const v = await hansard(['verify', '--digests', file, '--public-key', await saveKeys('k.json')]);
    expect(v.code, v.out.toString()).toBe(0);
    // The next export holds the late chunk, attested by its own digest.
    const next = join(tmp, 'after.tar');
    await ok(['export', SID, '--out', next], srv.tokens.reader);
    expect(readFileSync(join(extract(next), SID, 'segments', `${w}.jsonl`)).length).toBe(
      length + Buffer.byteLength(line),
    );
    expect((await hansard(['verify', '--digests', next, '--public-key', join(tmp, 'k.json')])).code).toBe(0);
  });

  it("refuses with exit 2: another tenant's token (404), an ingest-only token (403), a bad id, an unwritable path", async () => {
    const out = join(tmp, 'refused.tar');
    const theirs = await hansard(['export', SID, '--out', out], srv.tokens.globex);
    expect(theirs.code).toBe(2);
    expect(theirs.err).toMatch(/404 not_found/);
    const ingest = await hansard(['export', SID, '--out', out], srv.tokens.ingest);
    expect(ingest.code).toBe(2);
    expect(ingest.err).toMatch(/403 forbidden/);
    expect(ingest.err).toMatch(/read scope/);
    const bad = await hansard(['export', 'not-a-session', '--out', out], srv.tokens.reader);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/is not a session id/);
    const missingDir = await hansard(
      ['export', SID, '--out', join(tmp, 'no/such/dir/b.tar')],
      srv.tokens.reader,
    );
    expect(missingDir.code).toBe(2);
    expect(missingDir.err).toMatch(/cannot write the bundle to .*: its folder .* does not exist/);
    const aDir = join(tmp, 'a-directory');
    mkdirSync(aDir);
    const isDir = await hansard(['export', SID, '--out', aDir], srv.tokens.reader);
    expect(isDir.code).toBe(2);
    expect(isDir.err).toMatch(/is a directory/);
    // Nothing that looks like a bundle was left behind.
    expect(existsSync(out)).toBe(false);
    expect(existsSync(`${out}.partial`)).toBe(false);
  });

  it('--help teaches the three commands', async () => {
    const help = (await ok(['export', '--help'])).toString();
    expect(help).toMatch(/hansard export s_.* --out s\.tar\.gz/);
    expect(help).toMatch(/curl -s \$HANSARD_URL\/v1\/keys > keys\.json/);
    expect(help).toMatch(/hansard verify --digests s\.tar\.gz --public-key keys\.json/);
    expect(help).toMatch(/docs\/audit\.md/);
  });
});
