/**
 * Attack 2 on issue 15 item 1 (lib/client/api/upload-digests.ts): `hansard upload`'s check of the file's
 * uploaded bytes against the server's chunk list, with a lying or broken server. A tiny node:http
 * stand-in answers the routes the real client (`uploadSession`, the CLI's code) asks:
 * - a chunk list whose `next_from` does not advance (a page that loops): the client asks for the same
 *   page forever (never hangs up, never refuses);
 * - a chunk list that stops short of the writer's length with no `digest` (a gap): the gap is seen but
 *   ignored, and a same-length edit inside the unlisted range goes through the structural check, so the
 *   upload sends the file's new lines after bytes the server never attested to be this file's;
 * - a writer of 4,000,000,000 bytes listed as one chunk (a huge page): `hansard upload` (a real CLI
 *   process) dies on a native assertion of Node (`Assertion failed: args[3]->IsInt32()`, SIGABRT, a C++
 *   stack on stderr) instead of saying the file is not the server's segment: it reads the chunk's length
 *   into one buffer before comparing the server's length with the file's size.
 */

import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../lib/client/api/client.js';
import { uploadSession } from '../../lib/client/api/upload.js';
import { openSession } from '../../lib/log/write/writer.js';

interface Standin {
  url: string;
  chunkListCalls: number;
  posted: { offset: number; bytes: Buffer }[];
  server: Server;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

/** A session (start, 3 notes, …) of which the stand-in says it holds the first 3. */
function makeSession() {
  const w = openSession(mkdtempSync(join(tmpdir(), 'attack2-up-')), { agent: 'attack2' });
  w.note({ author: 'a', text: 'first note, uploaded' });
  w.note({ author: 'a', text: 'second note, uploaded' });
  w.note({ author: 'a', text: 'third note, not yet' });
  w.close();
  const bytes = readFileSync(w.path);
  const lines = bytes.toString('utf8').split('\n').filter(Boolean);
  const held = Buffer.from(`${lines.slice(0, 3).join('\n')}\n`);
  const lastSeq = (JSON.parse(lines[2]!) as { seq: number }).seq;
  return { w, bytes, lines, held, lastSeq };
}

/** Starts the stand-in; `chunks(from)` answers `GET …/chunks?from=`. */
async function standin(
  held: Buffer,
  lines: number,
  lastSeq: number,
  chunks: (from: number) => unknown,
): Promise<Standin> {
  const s: Standin = { url: '', chunkListCalls: 0, posted: [], server: createServer() };
  s.server.on('request', async (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (u.pathname === '/healthz') return json(200, { ok: true });
    if (req.method === 'GET' && u.pathname.endsWith('/chunks')) {
      s.chunkListCalls += 1;
      return json(200, chunks(Number(u.searchParams.get('from'))));
    }
    if (req.method === 'POST' && u.pathname.endsWith('/chunks')) {
      const parts: Buffer[] = [];
      for await (const p of req) parts.push(p as Buffer);
      const body = Buffer.concat(parts);
      const offset = Number(u.searchParams.get('offset'));
      s.posted.push({ offset, bytes: body });
      return json(201, { length: offset + body.length, lines: lines + 1 });
    }
    if (req.method === 'GET' && /\/writers\/w_[0-9A-Z]+$/.test(u.pathname)) {
      // No `digest`: an older server, or one that leaves it out.
      return json(200, { length: held.length, lines, last_seq: lastSeq });
    }
    return json(404, { error: { code: 'not_found', message: 'no', details: {} } });
  });
  s.server.listen(0, '127.0.0.1');
  await once(s.server, 'listening');
  servers.push(s.server);
  s.url = `http://127.0.0.1:${(s.server.address() as AddressInfo).port}`;
  return s;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('upload against a lying chunk list (issue 15 attack 2)', () => {
  it('gives up on a page whose next_from does not advance', async () => {
    const { w, held, lastSeq } = makeSession();
    const first = held.subarray(0, held.indexOf(0x0a) + 1);
    const s = await standin(held, 3, lastSeq, () => ({
      chunks: [{ offset: 0, length: first.length, lines: 1, sha256: sha(first) }],
      next_from: 0, // the same page again
    }));
    const client = new ApiClient({ url: s.url, token: 'x', minTimeoutMs: 5 });
    const outcome = await Promise.race([
      uploadSession(w.dir, { client }).then(
        () => 'resolved',
        (err: Error) => `rejected: ${err.message}`,
      ),
      new Promise<string>((r) => setTimeout(() => r('still running after 5 s'), 5000)),
    ]);
    // Observed: 'still running after 5 s', with thousands of identical GET …/chunks?from=0.
    expect(outcome).toMatch(/^rejected/);
    expect(s.chunkListCalls).toBeLessThan(100);
    expect(s.posted).toEqual([]);
  }, 15_000);

  it('refuses when the listed chunks do not reach the length the server holds', async () => {
    const { w, bytes, held, lastSeq } = makeSession();
    const first = held.subarray(0, held.indexOf(0x0a) + 1);
    const s = await standin(held, 3, lastSeq, () => ({
      chunks: [{ offset: 0, length: first.length, lines: 1, sha256: sha(first) }],
      next_from: null, // stops at line 1 of 3
    }));
    // Line 2 changed, same length and same seq (the structural check cannot see it).
    const edited = bytes.toString('utf8').replace('second note, uploaded', 'SECOND NOTE, EDITED!!');
    expect(edited.length).toBe(bytes.length);
    writeFileSync(w.path, edited);
    const client = new ApiClient({ url: s.url, token: 'x', minTimeoutMs: 5 });
    const outcome = await uploadSession(w.dir, { client }).then(
      () => 'resolved',
      (err: Error) => `rejected: ${err.message}`,
    );
    // Observed: 'resolved', and line 4 posted at offset held.length after the unchecked, edited line 2.
    expect(outcome).toMatch(/^rejected/);
    expect(s.posted).toEqual([]);
  }, 15_000);

  it('refuses a chunk larger than the file cleanly (real CLI process)', async () => {
    const { w, held, lastSeq } = makeSession();
    const huge = 4_000_000_000;
    const s = await standin(held, 3, lastSeq, () => ({
      chunks: [{ offset: 0, length: huge, lines: 3, sha256: 'a'.repeat(64) }],
      next_from: null,
    }));
    // The stand-in claims the writer holds `huge` bytes.
    s.server.removeAllListeners('request');
    s.server.on('request', (req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      res.writeHead(200, { 'content-type': 'application/json' });
      if (u.pathname.endsWith('/chunks'))
        return res.end(
          JSON.stringify({
            chunks: [{ offset: 0, length: huge, lines: 3, sha256: 'a'.repeat(64) }],
            next_from: null,
          }),
        );
      if (/\/writers\/w_[0-9A-Z]+$/.test(u.pathname))
        return res.end(JSON.stringify({ length: huge, lines: 3, last_seq: lastSeq }));
      return res.end('{}');
    });
    // spawnSync would block the stand-in's event loop: run the CLI asynchronously.
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['bin/hansard', 'upload', w.dir], {
      cwd: process.cwd(),
      env: { PATH: process.env.PATH, HANSARD_URL: s.url, HANSARD_TOKEN: 'x' },
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
    // Observed: signal SIGABRT (code null), stderr 'Assertion failed: args[3]->IsInt32()' and a native stack.
    expect(signal).toBeNull();
    expect(code).toBe(2);
    expect(err).not.toMatch(/Assertion failed|Native stack/);
    expect(err).toMatch(/not the segment the server has/);
    expect(s.posted).toEqual([]);
  }, 60_000);
});
