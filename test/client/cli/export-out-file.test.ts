/**
 * `hansard export --out FILE` and what is already at FILE, against a stand-in server on loopback: an
 * existing FILE (a keys.json, an earlier bundle) is kept with exit 2 and no request, `--force` replaces it;
 * .tgz is gzip like .gz; a name that says another format (x.zip) gets a tar and a notice on stderr.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../lib/client/cli/main.js';
import { tmpDirs } from '../../support/tmp.js';

const SID = 's_01M8MB9XXBAS3J6TGHM02TT9G4';
const BODY = Buffer.alloc(64 * 1024, 'bundle-bytes ');
let server: Server;
let url: string;
let requests = 0;
const scratch = tmpDirs('hansard-export-out-');

beforeAll(async () => {
  server = createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/x-tar', 'hansard-head-seq': '3' });
    res.end(BODY);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

async function run(args: string[], cwd = scratch.make()) {
  let out = '';
  let err = '';
  const io = {
    stdout: { write: (s: string | Uint8Array) => (out += String(s)) },
    stderr: { write: (s: string) => (err += s), isTTY: false },
    env: { HANSARD_URL: url, HANSARD_TOKEN: 'hns_test' },
    cwd,
  };
  const code = await runCli(args, io);
  return { code, out, err, cwd };
}

describe('hansard export --out FILE when FILE exists', () => {
  it('an unrelated existing file is kept: exit 2, the message says --force, no download', async () => {
    const cwd = scratch.make();
    const keys = '{"keys":[{"key_id":"k_1"}]}\n';
    writeFileSync(join(cwd, 'keys.json'), keys);
    const before = requests;
    const r = await run(['export', SID, '--out', 'keys.json'], cwd);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      `${join(cwd, 'keys.json')} exists: pass --force to replace it, or choose another name`,
    );
    expect(readFileSync(join(cwd, 'keys.json'), 'utf8')).toBe(keys);
    expect(readdirSync(cwd)).toEqual(['keys.json']);
    expect(requests).toBe(before);
  });

  it('an earlier bundle is kept, --json too; --force replaces it', async () => {
    const cwd = scratch.make();
    writeFileSync(join(cwd, 's.tar'), 'earlier bundle');
    const kept = await run(['export', SID, '--out', 's.tar', '--json'], cwd);
    expect(kept.code).toBe(2);
    expect(JSON.parse(kept.err).error).toMatchObject({ code: 'file_exists', exit_code: 2 });
    expect(JSON.parse(kept.err).error.message).toMatch(/exists: pass --force/);
    expect(readFileSync(join(cwd, 's.tar'), 'utf8')).toBe('earlier bundle');
    const forced = await run(['export', SID, '--out', 's.tar', '--force'], cwd);
    expect(forced.code, forced.err).toBe(0);
    expect(readFileSync(join(cwd, 's.tar')).equals(BODY)).toBe(true);
    expect(readdirSync(cwd)).toEqual(['s.tar']);
  });
});

describe('hansard export --out names', () => {
  it('.tgz is gzip-compressed like .tar.gz, with no notice', async () => {
    const r = await run(['export', SID, '--out', 's.tgz']);
    expect(r.code, r.err).toBe(0);
    expect(gunzipSync(readFileSync(join(r.cwd, 's.tgz'))).equals(BODY)).toBe(true);
    expect(r.err).not.toMatch(/will hold/);
  });

  it('x.zip gets a plain tar and says so on stderr', async () => {
    const r = await run(['export', SID, '--out', 'x.zip']);
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(join(r.cwd, 'x.zip')).equals(BODY)).toBe(true);
    expect(r.err).toContain('x.zip will hold a tar archive');
    expect(existsSync(join(r.cwd, 'x.zip.partial'))).toBe(false);
  });

  it('--help says which names are gzip-compressed and what --force does', async () => {
    const r = await run(['export', '--help']);
    expect(r.out).toMatch(/\.tgz/);
    expect(r.out).toMatch(/--force/);
  });
});
