/**
 * Token masking in what a server logs (lib/http/request-log.ts, issue 24 item 6): `maskTokens` on every
 * form a token takes in a logged path, `maskError` and `maskingLog` for the app's error log, and the
 * Lambda functions' error log (functions/logging.ts). The real server's stderr is
 * test/attack/log-tokens.test.ts.
 */

import { inspect } from 'node:util';
import type { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it, vi } from 'vitest';
import { errorLog } from '../../functions/logging.js';
import { MASKED_TOKEN, maskError, maskingLog, maskTokens } from '../../lib/http/request-log.js';

const SECRET = `${'Ab3dE'.repeat(8)}xY9`;
const TOKEN = `hns_${SECRET}`;

describe('maskTokens', () => {
  it('masks a token whole, cut short, run on, in any case and anywhere in a line', () => {
    expect(maskTokens(`DELETE /v1/tokens/${TOKEN} 404 1 ms`)).toBe(
      `DELETE /v1/tokens/${MASKED_TOKEN} 404 1 ms`,
    );
    expect(maskTokens(`GET /sessions/${TOKEN.slice(0, 20)}`)).toBe(`GET /sessions/${MASKED_TOKEN}`);
    expect(maskTokens(`x${TOKEN}ZZZ/replay`)).toBe(`x${MASKED_TOKEN}/replay`);
    expect(maskTokens(`HNS_${SECRET}`)).toBe(MASKED_TOKEN);
    expect(maskTokens(`${TOKEN} and ${TOKEN}`)).toBe(`${MASKED_TOKEN} and ${MASKED_TOKEN}`);
  });

  it('masks a token percent-encoded in part, in whole, in either hex case, and twice', () => {
    const all = [...TOKEN].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    for (const s of [
      `hns%5F${SECRET}`,
      `hns%5f${SECRET}`,
      `%68%6E%73%5F${SECRET}`,
      all,
      all.toUpperCase(),
      `hns%255F${SECRET}`,
      `hns_${SECRET.slice(0, 10)}%41%7A%30${SECRET.slice(10)}`,
    ]) {
      expect(maskTokens(`/v1/tokens/${s} 404`), s).toBe(`/v1/tokens/${MASKED_TOKEN} 404`);
    }
  });

  it('leaves text without a token as it is: the bare prefix, the docs’ hns_…, other ids', () => {
    for (const s of [
      'GET /v1/board 200 3 ms',
      'send Authorization: Bearer hns_…',
      'hns_ alone',
      'tk_01ABC hns-x',
      '%68%6E%73 only',
    ]) {
      expect(maskTokens(s)).toBe(s);
    }
  });
});

describe('maskError and maskingLog', () => {
  it('copies an Error whose message or stack holds a token, keeping its name; leaves others as they are', () => {
    const err = new TypeError(`bad path /v1/tokens/${TOKEN}`);
    const masked = maskError(err) as Error;
    expect(masked).not.toBe(err);
    expect(masked.name).toBe('TypeError');
    expect(masked.message).toBe(`bad path /v1/tokens/${MASKED_TOKEN}`);
    expect(masked.stack).not.toContain(SECRET);
    expect(err.message).toContain(SECRET); // the thrown error itself is not changed
    const plain = new Error('disk full');
    expect(maskError(plain)).toBe(plain);
    expect(maskError(`s ${TOKEN}`)).toBe(`s ${MASKED_TOKEN}`);
    expect(maskError(42)).toBe(42);
    expect(maskError(undefined)).toBeUndefined();
    const noStack = new Error(`x ${TOKEN}`);
    noStack.stack = undefined;
    expect((maskError(noStack) as Error).stack).toBeUndefined();
  });

  it("masks the whole error a logger may write: its cause chain, AggregateError's errors, own properties", () => {
    class StoreError extends Error {
      constructor(
        message: string,
        readonly code: string,
        options?: ErrorOptions,
      ) {
        super(message, options);
        this.name = 'StoreError';
      }
    }
    const inner = new Error(`upstream refused ${TOKEN}`, { cause: { path: `/v1/tokens/${TOKEN}` } });
    const err = Object.assign(new StoreError('storage failed', 'io', { cause: inner }), {
      url: `/v1/tokens/${TOKEN}`,
      $response: { headers: { authorization: `Bearer ${TOKEN}` }, list: [TOKEN, 1, null] },
      body: Buffer.from(TOKEN),
    });
    const masked = maskError(err) as StoreError & Record<string, unknown>;
    expect(masked).not.toBe(err);
    expect(masked).toBeInstanceOf(StoreError);
    expect([masked.name, masked.code, masked.message]).toEqual(['StoreError', 'io', 'storage failed']);
    const cause = masked.cause as Error & { cause: { path: string } };
    expect(cause).toBeInstanceOf(Error);
    expect(cause.message).toBe(`upstream refused ${MASKED_TOKEN}`);
    expect(cause.cause.path).toBe(`/v1/tokens/${MASKED_TOKEN}`);
    expect(masked.url).toBe(`/v1/tokens/${MASKED_TOKEN}`);
    expect(masked.$response).toEqual({
      headers: { authorization: `Bearer ${MASKED_TOKEN}` },
      list: [MASKED_TOKEN, 1, null],
    });
    expect(masked.body).toBe('<47 bytes>');
    // enumerability kept: message and stack stay hidden from a for…in, url does not
    expect(Object.keys(masked)).toEqual(expect.arrayContaining(['url', 'code']));
    expect(Object.keys(masked)).not.toContain('message');
    expect(inspect(masked)).not.toContain(SECRET);
    expect(err.url).toContain(SECRET); // the thrown error itself is not changed

    const agg = maskError(
      new AggregateError([new Error(`one ${TOKEN}`), `two ${TOKEN}`], 'several'),
    ) as AggregateError;
    expect(agg).toBeInstanceOf(AggregateError);
    expect(agg.errors.map((e: unknown) => (e instanceof Error ? e.message : e))).toEqual([
      `one ${MASKED_TOKEN}`,
      `two ${MASKED_TOKEN}`,
    ]);
    expect(inspect(agg)).not.toContain(SECRET);
  });

  it('copies nothing that holds no token, reads a cycle and a throwing getter without failing', () => {
    const plain = Object.assign(new Error('disk full', { cause: new Error('EIO') }), { url: '/v1/board' });
    expect(maskError(plain)).toBe(plain);
    const obj = { a: 'x' };
    expect(maskError(obj)).toBe(obj);
    const cyc = Object.assign(new Error(`at ${TOKEN}`), { self: null as unknown });
    cyc.self = cyc;
    Object.defineProperty(cyc, 'boom', {
      enumerable: true,
      get() {
        throw new Error('no');
      },
    });
    const masked = maskError(cyc) as Error & { self: unknown; boom: unknown };
    expect(masked.message).toBe(`at ${MASKED_TOKEN}`);
    expect(masked.self).toBe('[Circular]');
    expect(masked.boom).toBe('[unreadable]');
    let deep: Record<string, unknown> = { t: TOKEN };
    for (let i = 0; i < 20; i++) deep = { deep };
    expect(JSON.stringify(maskError(deep))).not.toContain(SECRET);
  });

  it('masks the line and the error it passes on, and passes one argument when it was given one', () => {
    const calls: unknown[][] = [];
    const log = maskingLog((...args: unknown[]) => calls.push(args));
    log(`GET /sessions/${TOKEN}: stalled`);
    log('unhandled error', new Error(`at ${TOKEN}`));
    expect(calls[0]).toEqual([`GET /sessions/${MASKED_TOKEN}: stalled`]);
    expect(calls[1]![0]).toBe('unhandled error');
    expect((calls[1]![1] as Error).message).toBe(`at ${MASKED_TOKEN}`);
    expect(JSON.stringify(calls)).not.toContain(SECRET);
  });
});

describe("the Lambda functions' error log", () => {
  it('masks a token in the message, in an Error and in anything else logged', () => {
    const logger = { error: vi.fn() };
    const log = errorLog(logger as unknown as Logger);
    log(`GET /v1/tokens/${TOKEN}: stalled`, new Error(`route /v1/tokens/${TOKEN}`));
    log('rate limiter failed', `cause ${TOKEN}`);
    log('plain');
    const [m0, e0] = logger.error.mock.calls[0]!;
    expect(m0).toBe(`GET /v1/tokens/${MASKED_TOKEN}: stalled`);
    expect((e0 as Error).message).toBe(`route /v1/tokens/${MASKED_TOKEN}`);
    expect(logger.error.mock.calls[1]).toEqual(['rate limiter failed', { error: `cause ${MASKED_TOKEN}` }]);
    expect(logger.error.mock.calls[2]).toEqual(['plain', { error: '' }]);
  });
});
