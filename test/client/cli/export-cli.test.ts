/**
 * `hansard export` against a stand-in server on loopback (node:http), for what a real server does not do
 * on demand: a download broken off mid-body leaves neither FILE nor FILE.partial and exits 1; a complete
 * one is renamed into place (gzip when FILE ends in .gz), with a progress line when stderr is a terminal
 * and none when it is not. The real route and verifier: test/e2e/export-verify.test.ts.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../lib/client/cli/main.js';
import { tmpDirs } from '../../support/tmp.js';

const SID = 's_01M8MB9XXBAS3J6TGHM02TT9G4';
/** What the stand-in sends as the bundle (not a real tar: the CLI does not read what it saves). */
const BODY = Buffer.alloc(256 * 1024, 'bundle-bytes ');
let mode: 'whole' | 'broken' = 'whole';
let server: Server;
let url: string;
const scratch = tmpDirs('hansard-export-cli-');

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url !== `/v1/sessions/${SID}/export`) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'not_found', message: 'no such session', details: {} } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/x-tar', 'hansard-head-seq': '7' });
    if (mode === 'whole') {
      res.end(BODY);
      return;
    }
    // Half the bundle, then the connection is cut without the body's end.
    res.write(BODY.subarray(0, BODY.length / 2), () => setTimeout(() => res.socket?.destroy(), 50));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

/** Runs the CLI in-process; `tty` says whether its stderr is a terminal. */
async function run(args: string[], tty = false) {
  let out = '';
  let err = '';
  const io = {
    stdout: { write: (s: string | Uint8Array) => (out += String(s)) },
    stderr: { write: (s: string) => (err += s), isTTY: tty },
    env: { HANSARD_URL: url, HANSARD_TOKEN: 'hns_test' },
    cwd: scratch.make(),
  };
  const code = await runCli(args, io);
  return { code, out, err, cwd: io.cwd };
}

describe('hansard export downloads', () => {
  it('broken off mid-body: exit 1, and neither FILE nor FILE.partial is left', async () => {
    mode = 'broken';
    const r = await run(['export', SID, '--out', 'b.tar']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      new RegExp(`the export of ${SID} stopped after \\d+ bytes .*nothing was written to b\\.tar`),
    );
    expect(readdirSync(r.cwd)).toEqual([]);
  });

  it('whole: renamed into place; .gz is gzip of the bytes; --json says what was written', async () => {
    mode = 'whole';
    const plain = await run(['export', SID, '--out', 'b.tar', '--json']);
    expect(plain.code, plain.err).toBe(0);
    expect(JSON.parse(plain.out)).toEqual({
      file: join(plain.cwd, 'b.tar'),
      bytes: BODY.length,
      sid: SID,
      head_seq: 7,
    });
    expect(readFileSync(join(plain.cwd, 'b.tar')).equals(BODY)).toBe(true);
    expect(readdirSync(plain.cwd)).toEqual(['b.tar']);
    const gz = await run(['export', SID, '--out', 'b.tar.gz']);
    expect(gz.code, gz.err).toBe(0);
    const file = readFileSync(join(gz.cwd, 'b.tar.gz'));
    expect(gunzipSync(file).equals(BODY)).toBe(true);
    expect(gz.out).toMatch(/its newest digest is seq 7/);
  });

  it('a progress line on a terminal, none otherwise', async () => {
    mode = 'whole';
    const tty = await run(['export', SID, '--out', 'b.tar'], true);
    expect(tty.code).toBe(0);
    expect(tty.err).toContain('\r\x1b[K  downloading: ');
    const piped = await run(['export', SID, '--out', 'b.tar'], false);
    expect(piped.err).not.toMatch(/downloading/);
  });

  it('a 404 leaves nothing behind and exits 2', async () => {
    const r = await run(['export', 's_01M8QD00000000000000000000', '--out', 'b.tar']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/404 not_found/);
    expect(existsSync(join(r.cwd, 'b.tar.partial'))).toBe(false);
  });
});
