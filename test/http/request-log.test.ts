/**
 * Token masking in what a server logs (lib/http/request-log.ts, issue 24 item 6): `maskTokens` on every
 * form a token takes in a logged path, `maskError` and `maskingLog` for the app's error log, and the
 * Lambda functions' error log (functions/logging.ts). The real server's stderr is
 * test/attack/log-tokens.test.ts.
 */
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
