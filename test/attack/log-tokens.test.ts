/**
 * No token in the logs (issue 24 item 6, DESIGN §4): `hansard serve` as its own process, its real stderr
 * (the request log and the error log) read after real HTTP requests that carry a token in the path (a
 * token pasted where an id goes: `DELETE /v1/tokens/hns_…`, `GET /sessions/hns_…`), percent-encoded in
 * the path (once and twice), in the query and in headers. The log keeps its lines, with `hns_***` where
 * a token was. Before the fix the request log wrote a token in the path whole (also when percent-encoded:
 * the router decodes the path once).
 */
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServeProcess } from '../../harness/serve-process.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** A well-formed token secret no server knows: `hns_` + 43 base62. */
const fakeToken = () => `hns_${Array.from({ length: 43 }, () => BASE62[randomInt(62)]).join('')}`;
/** Every character of `s` percent-encoded. */
const encodeAll = (s: string) => [...s].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');

let srv: ServeProcess;

beforeAll(async () => {
  srv = await startServeProcess();
}, 60_000);

afterAll(async () => {
  await srv?.close();
});

/** Sends one request and drains its answer. */
async function send(method: string, path: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(`${srv.url}${path}`, { method, headers, redirect: 'manual' });
  await res.arrayBuffer();
  return res.status;
}

/** Resolves once the server's stderr holds `marker` (the request log is written after the answer). */
async function logHolds(marker: string): Promise<string> {
  for (;;) {
    const err = srv.stderr();
    if (err.includes(marker)) return err;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the server log (a real hansard serve process)', () => {
  it('masks every hns_ token in a path, encoded or not, and never writes one from the query or a header', async () => {
    const admin = { authorization: `Bearer ${srv.admin}` };
    const tokens = Array.from({ length: 10 }, fakeToken);
    const [t0, t1, t2, t3, t4, t5, t6, t7, t8, t9] = tokens as [string, ...string[]];
    const requests: [string, string, Record<string, string>?][] = [
      ['DELETE', `/v1/tokens/${t0}`, admin],
      ['GET', `/sessions/${t1}`],
      ['GET', `/v1/sessions/${t2}/replay`, admin],
      // percent-encoded: the underscore, every character, and twice (%255F)
      ['GET', `/v1/tokens/hns%5F${t3!.slice(4)}`, admin],
      ['DELETE', `/v1/tokens/${encodeAll(t4!)}`, admin],
      ['GET', `/sessions/hns%255F${t5!.slice(4)}`],
      // the query and headers
      ['GET', `/v1/board?token=${t6}`],
      ['GET', `/?token=${t7}&next=/`],
      ['GET', '/v1/board', { authorization: `Bearer ${t8}` }],
      ['GET', '/v1/board', { ...admin, 'x-api-key': t9!, cookie: `hansard_token=${t9}` }],
    ];
    for (const [method, path, headers] of requests) await send(method, path, headers);
    await send('GET', '/healthz');
    const log = await logHolds('GET /healthz');

    for (const t of [...tokens, srv.admin]) {
      // neither the token nor its 43 characters (what an encoded form leaves of it once decoded)
      expect(log).not.toContain(t.slice(4));
    }
    // The lines are there, with the token masked where it was in the path.
    expect(log).toMatch(/^DELETE \/v1\/tokens\/hns_\*\*\* 4\d\d \d+ ms$/m);
    expect(log).toMatch(/^GET \/sessions\/hns_\*\*\* \d{3} \d+ ms$/m);
    expect(log).toMatch(/^GET \/v1\/sessions\/hns_\*\*\*\/replay 4\d\d \d+ ms$/m);
    expect(log).toMatch(/^GET \/v1\/tokens\/hns_\*\*\* \d{3} \d+ ms$/m);
    expect(log).toMatch(/^GET \/sessions\/hns_\*\*\* \d{3} \d+ ms$/m);
    expect(log).toMatch(/^GET \/v1\/board 401 \d+ ms$/m);
    expect(log.match(/hns_\*\*\*/g)?.length).toBe(6);
  });
});
