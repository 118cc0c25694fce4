/**
 * Issue 16.3 attacks on the chunk body reader (lib/http/node-body.ts `readIncoming`, on
 * @hono/node-server's IncomingMessage): raw HTTP/1.1 over a socket to a real server on loopback (the
 * app on node-server, default limits: 5 MiB a chunk), each chunk a new segment's first one.
 *
 * All held when written: a body of exactly 5 MiB is taken (201), one byte more refused 413 with nothing
 * stored, both with Content-Length and with chunked encoding; a Content-Length shorter than the body
 * takes only the bytes it declared (a cut line: 400 incomplete_line, nothing stored; the rest is the
 * next request, which Node refuses); two different Content-Length headers are refused by Node (400) with
 * nothing stored; a client that stops mid-body and closes, or stops and stays silent, leaves nothing
 * stored and the writer free (the same chunk is then 201); two chunk requests pipelined on one
 * connection are each read whole (201 then 201, the second at the first's length).
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ mayLog: /client closed|aborted|ECONNRESET/ });
const LIMIT = 5 * 1024 * 1024;

/** A new segment's bytes: its writer.start, then note lines padded so the whole is exactly `size`. */
function segment(sid: string, w: string, size: number): Buffer {
  const env = (seq: number, id: string, type: string) =>
    `{"v":3,"sid":"${sid}","w":"${w}","seq":${seq},"id":"${id}","ts":"2026-11-01T00:00:00.000000Z","mono":0,"type":"${type}"`;
  const start = `${env(1, w, 'writer.start')},"writer_id":"${w}","meta":{}}\n`;
  const head = `${env(2, newId('e'), 'note')},"author":"a","text":"`;
  const tail = '"}\n';
  const pad = size - start.length - head.length - tail.length;
  if (pad < 0) throw new Error('too small');
  return Buffer.from(start + head + 'x'.repeat(pad) + tail);
}

interface Exchange {
  /** what the server sent back, as text */
  text: string;
  /** status codes of every answer in it */
  statuses: number[];
}

/**
 * Sends `parts` on one connection (a pause of `gapMs` between them), then waits for the server to close
 * or for `waitMs`; `closeAfter` ends the connection right after the last part.
 */
function exchange(
  parts: Array<string | Buffer>,
  o: { waitMs?: number; closeAfter?: boolean; gapMs?: number } = {},
): Promise<Exchange> {
  return new Promise((resolve) => {
    const sock = connect(srv.port, '127.0.0.1');
    const got: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      sock.destroy();
      const text = Buffer.concat(got).toString('latin1');
      const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
      resolve({ text, statuses });
    };
    sock.on('data', (d) => got.push(d));
    sock.on('close', finish);
    sock.on('error', finish);
    setTimeout(finish, o.waitMs ?? 10_000);
    sock.on('connect', async () => {
      for (const p of parts) {
        if (sock.destroyed) break;
        sock.write(p);
        if (o.gapMs) await new Promise((r) => setTimeout(r, o.gapMs));
      }
      if (o.closeAfter) sock.destroy();
    });
  });
}

const head = (sid: string, w: string, offset: number, headers: string) =>
  `POST /v1/sessions/${sid}/writers/${w}/chunks?offset=${offset} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
  `Authorization: Bearer ${srv.tenant.admin}\r\nContent-Type: application/x-ndjson\r\n${headers}\r\n`;

function chunked(body: Buffer, piece = 256 * 1024): Buffer[] {
  const out: Buffer[] = [];
  for (let p = 0; p < body.length; p += piece) {
    const b = body.subarray(p, p + piece);
    out.push(Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n'));
  }
  out.push(Buffer.from('0\r\n\r\n'));
  return out;
}

async function stored(sid: string, w: string): Promise<number | null> {
  const a = await request(srv, 'GET', `/v1/sessions/${sid}/writers/${w}`, { token: srv.tenant.admin });
  if (a.status === 404) return null;
  expect(a.status, a.text).toBe(200);
  return (a.json as { length: number }).length;
}

describe('the chunk body reader against Content-Length lies', () => {
  for (const framing of ['content-length', 'chunked'] as const) {
    it(`a body of exactly the limit is taken and one byte more refused (${framing})`, async () => {
      for (const [size, status] of [
        [LIMIT, 201],
        [LIMIT + 1, 413],
      ] as const) {
        const sid = newId('s');
        const w = newId('w');
        const body = segment(sid, w, size);
        expect(body.length).toBe(size);
        const parts =
          framing === 'content-length'
            ? [head(sid, w, 0, `Content-Length: ${size}\r\n`), body]
            : [head(sid, w, 0, 'Transfer-Encoding: chunked\r\n'), ...chunked(body)];
        const a = await exchange(parts, { waitMs: status === 201 ? 20_000 : 10_000 });
        expect(a.statuses[0], a.text.slice(0, 300)).toBe(status);
        expect(await stored(sid, w)).toBe(status === 201 ? size : null);
      }
    }, 60_000);
  }

  it('a Content-Length shorter than the body: only the declared bytes, a cut line refused', async () => {
    const sid = newId('s');
    const w = newId('w');
    const body = segment(sid, w, 2000);
    // the declared bytes, then (after the app has answered) the 10 more, which Node reads as a request
    const a = await exchange(
      [head(sid, w, 0, `Content-Length: ${body.length - 10}\r\n`), body.subarray(0, -10), body.subarray(-10)],
      { gapMs: 300 },
    );
    expect(a.statuses[0]).toBe(400);
    expect(a.text).toContain('incomplete_line');
    expect(await stored(sid, w)).toBeNull();
  });

  it('two different Content-Length headers: refused before the app, nothing stored', async () => {
    const sid = newId('s');
    const w = newId('w');
    const body = segment(sid, w, 2000);
    const a = await exchange([
      head(sid, w, 0, `Content-Length: ${body.length}\r\nContent-Length: ${body.length - 100}\r\n`),
      body,
    ]);
    expect(a.statuses[0] ?? 400).toBe(400);
    expect(await stored(sid, w)).toBeNull();
  });

  it('a client that stops mid-body (closing, or silent) leaves nothing stored and the writer free', async () => {
    const sid = newId('s');
    const w = newId('w');
    const body = segment(sid, w, 300_000);
    // closes after half the body
    await exchange([head(sid, w, 0, `Content-Length: ${body.length}\r\n`), body.subarray(0, 150_000)], {
      closeAfter: true,
      waitMs: 1000,
    });
    expect(await stored(sid, w)).toBeNull();
    // silent after half the body (the test server has no request timeout: it waits; we give up)
    const silent = exchange(
      [head(sid, w, 0, `Content-Length: ${body.length}\r\n`), body.subarray(0, 150_000)],
      {
        waitMs: 1500,
      },
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(await stored(sid, w)).toBeNull();
    await silent;
    const ok = await request(srv, 'POST', `/v1/sessions/${sid}/writers/${w}/chunks?offset=0`, {
      token: srv.tenant.admin,
      body,
    });
    expect(ok.status, ok.text).toBe(201);
    expect(await stored(sid, w)).toBe(body.length);
  });

  it('two chunks pipelined on one connection are each read whole', async () => {
    const sid = newId('s');
    const w = newId('w');
    const first = segment(sid, w, 5000);
    const line = Buffer.from(
      `{"v":3,"sid":"${sid}","w":"${w}","seq":3,"id":"${newId('e')}","ts":"2026-11-01T00:00:01.000000Z","mono":1,"type":"note","author":"a","text":"second"}\n`,
    );
    const a = await exchange(
      [
        Buffer.concat([
          Buffer.from(head(sid, w, 0, `Content-Length: ${first.length}\r\n`)),
          first,
          Buffer.from(head(sid, w, first.length, `Content-Length: ${line.length}\r\nConnection: close\r\n`)),
          line,
        ]),
      ],
      { waitMs: 5000 },
    );
    expect(a.statuses).toEqual([201, 201]);
    expect(await stored(sid, w)).toBe(first.length + line.length);
  });
});
