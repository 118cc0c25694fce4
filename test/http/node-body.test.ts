/**
 * `readIncoming` (lib/http/node-body.ts, issue 16.3): a request body read straight from Node's
 * `IncomingMessage` into one buffer, within a limit, over a real HTTP server on loopback: with and without
 * Content-Length, exactly at, one past and far past the limit, empty, and a client that goes away mid-body.
 */
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IncomingBody, incomingOf, readIncoming } from '../../lib/http/node-body.js';

const LIMIT = 100_000;
let server: Server;
let port = 0;
/** The outcome of the last request's read, resolved by the server's handler. */
let nextRead: (r: IncomingBody | Error) => void = () => {};

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    readIncoming(req, LIMIT).then(
      (r) => {
        nextRead(r);
        res.setHeader('Connection', r.cut ? 'close' : 'keep-alive');
        res.end(String(r.bytes.length));
      },
      (err: Error) => {
        nextRead(err);
        res.destroy();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Sends `pieces` as one body (Content-Length when `withLength`, else chunked); resolves with the server's read. */
function send(pieces: Buffer[], withLength: boolean): Promise<IncomingBody | Error> {
  const got = new Promise<IncomingBody | Error>((resolve) => {
    nextRead = resolve;
  });
  const total = pieces.reduce((n, p) => n + p.length, 0);
  const req = request({
    port,
    method: 'POST',
    path: '/',
    headers: withLength ? { 'content-length': String(total) } : { 'transfer-encoding': 'chunked' },
  });
  req.on('error', () => {}); // a cut body may reset the connection under the client
  req.on('response', (res) => res.resume());
  for (const p of pieces) req.write(p);
  req.end();
  return got;
}

const bytesOf = (n: number, seed = 7) =>
  Buffer.from(Array.from({ length: n }, (_, k) => (k * seed + 3) & 0xff));

describe('readIncoming', () => {
  for (const withLength of [true, false]) {
    const how = withLength ? 'with Content-Length' : 'chunked';
    it(`${how}: the whole body in one buffer of its own, sent in pieces`, async () => {
      const body = bytesOf(70_000);
      const r = (await send(
        [body.subarray(0, 10), body.subarray(10, 40_000), body.subarray(40_000)],
        withLength,
      )) as IncomingBody;
      expect(r.cut).toBe(false);
      expect(r.bytes.equals(body)).toBe(true);
      // Its own ArrayBuffer: the body cache keeps `bytes.buffer`, which must be the body, not a shared pool.
      expect(r.bytes.buffer.byteLength).toBe(body.length);
      expect(r.bytes.byteOffset).toBe(0);
    });

    it(`${how}: a body of exactly the limit is whole; one byte more is cut at limit + 1`, async () => {
      const at = (await send([bytesOf(LIMIT)], withLength)) as IncomingBody;
      expect(at).toMatchObject({ cut: false });
      expect(at.bytes.equals(bytesOf(LIMIT))).toBe(true);
      const past = (await send([bytesOf(LIMIT + 1)], withLength)) as IncomingBody;
      expect(past.cut).toBe(true);
      expect(past.bytes.equals(bytesOf(LIMIT + 1))).toBe(true);
    });

    it(`${how}: a body far past the limit gives its first limit + 1 bytes`, async () => {
      const body = bytesOf(LIMIT * 3, 13);
      const r = (await send([body.subarray(0, LIMIT), body.subarray(LIMIT)], withLength)) as IncomingBody;
      expect(r.cut).toBe(true);
      expect(r.bytes.equals(body.subarray(0, LIMIT + 1))).toBe(true);
      expect(r.bytes.buffer.byteLength).toBe(LIMIT + 1);
    });

    it(`${how}: an empty body`, async () => {
      const r = (await send([], withLength)) as IncomingBody;
      expect(r).toMatchObject({ cut: false });
      expect(r.bytes.length).toBe(0);
    });
  }

  it('a client gone before the body ended: the read fails', async () => {
    const got = new Promise<IncomingBody | Error>((resolve) => {
      nextRead = resolve;
    });
    const req = request({ port, method: 'POST', path: '/', headers: { 'content-length': '50000' } });
    req.on('error', () => {});
    req.write(bytesOf(1000));
    await new Promise((r) => setTimeout(r, 50));
    req.destroy();
    const r = await got;
    expect(r).toBeInstanceOf(Error);
  });

  it('incomingOf takes node-server bindings with an unread request only', () => {
    expect(incomingOf(undefined)).toBeNull();
    expect(incomingOf({})).toBeNull();
    expect(incomingOf({ incoming: 'x' })).toBeNull();
    const fake = { on() {}, headers: {}, readableDidRead: false };
    expect(incomingOf({ incoming: fake })).toBe(fake);
    expect(incomingOf({ incoming: { ...fake, readableDidRead: true } })).toBeNull();
  });
});
