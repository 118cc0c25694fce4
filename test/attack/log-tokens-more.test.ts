/**
 * Attack (issue 24 item 6, lib/log/redact/mask-tokens.ts, functions/logging.ts): tokens where a log might still
 * write them. A real `hansard serve` process's stderr after real HTTP requests carrying a token in a JSON
 * body that fails to parse or validate, in a header the app reads (Idempotency-Key, Authorization in odd
 * schemes), in query parameters it echoes in errors (cursor, format, q), in a path of every route family
 * (404 pages, ids, chunk uploads, lower-case percent-encoding); and the Lambda functions' error log given
 * errors that carry a token beyond their message and stack (a `cause`, an own property).
 */
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServeProcess } from '../../harness/serve-process.js';

const LOGGING = fileURLToPath(new URL('../../functions/logging.ts', import.meta.url));
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const fakeToken = () => `hns_${Array.from({ length: 43 }, () => BASE62[randomInt(62)]).join('')}`;
/** Whether `log` holds 16 characters running of the token's secret (what would let it be pieced together). */
const holds = (log: string, token: string) => {
  const secret = token.slice(4);
  for (let i = 0; i + 16 <= secret.length; i++) if (log.includes(secret.slice(i, i + 16))) return true;
  return false;
};

describe('a real hansard serve process', () => {
  let srv: ServeProcess;
  beforeAll(async () => {
    srv = await startServeProcess();
  }, 60_000);
  afterAll(async () => {
    await srv?.close();
  });

  it('writes no token from bodies, headers, queries or paths of any route, whatever the answer', async () => {
    const A = { authorization: `Bearer ${srv.admin}`, 'content-type': 'application/json' };
    const sid = 's_01M8QD00000000000000000001';
    const sent: string[] = [];
    const t = () => {
      const x = fakeToken();
      sent.push(x);
      return x;
    };
    const requests: [string, string, RequestInit][] = [
      // bodies: not JSON, JSON cut short, a token where an enum goes, an unknown key
      ['POST', '/v1/tokens', { headers: A, body: `{"label":"${t()}` }],
      ['POST', '/v1/tokens', { headers: A, body: t() }],
      ['POST', '/v1/tokens', { headers: A, body: JSON.stringify({ scopes: [t()] }) }],
      ['POST', '/v1/tokens', { headers: A, body: JSON.stringify({ scopes: ['read'], [t()]: 1 }) }],
      ['POST', `/v1/sessions/${sid}/status`, { headers: A, body: JSON.stringify({ state: t() }) }],
      [
        'POST',
        `/v1/sessions/${sid}/status`,
        { headers: A, body: JSON.stringify({ state: 'working', note: t() }) },
      ],
      [
        'POST',
        `/v1/sessions/${sid}/writers/w_01M8QD00000000000000000001/chunks?offset=0`,
        { headers: { ...A, 'content-type': 'application/x-ndjson' }, body: `{"x":"${t()}"}\n` },
      ],
      // headers
      ['POST', '/v1/work', { headers: { ...A, 'idempotency-key': t() }, body: '{}' }],
      [
        'GET',
        '/v1/board',
        { headers: { authorization: `Basic ${Buffer.from(`u:${t()}`).toString('base64')}` } },
      ],
      ['GET', '/v1/board', { headers: { authorization: t() } }],
      ['GET', '/v1/board', { headers: { authorization: `Bearer ${t()}!` } }],
      [
        'GET',
        '/v1/board',
        {
          headers: { authorization: `Bearer ${t()}`, 'x-forwarded-for': t(), referer: `http://x/?t=${t()}` },
        },
      ],
      // queries an error may quote
      ['GET', `/v1/sessions?cursor=${t()}`, { headers: A }],
      ['GET', `/v1/sessions/${sid}/replay?format=${t()}`, { headers: A }],
      ['GET', `/v1/board?q=${t()}`, { headers: A }],
      // paths: every family, lower-case percent-encoding, a token after "Bearer " pasted whole
      ['GET', `/v1/work/${t()}`, { headers: A }],
      ['POST', `/v1/sessions/${t()}/writers/w_x/chunks`, { headers: A, body: 'x' }],
      ['GET', `/${t().replace('_', '%5f')}`, {}],
      ['GET', `/v1/tokens/Bearer%20${t()}`, { headers: A }],
      ['GET', `/sessions/${sid}/${t()}`, {}],
      ['GET', `/v1/${t().toLowerCase()}`, {}],
    ];
    for (const [method, path, init] of requests) {
      const r = await fetch(`${srv.url}${path}`, { method, redirect: 'manual', ...init });
      await r.arrayBuffer();
    }
    await fetch(`${srv.url}/healthz`);
    for (let i = 0; i < 100 && !srv.stderr().includes('GET /healthz'); i++)
      await new Promise((r) => setTimeout(r, 20));
    const log = srv.stderr();
    expect(log).toContain('GET /healthz');
    for (const token of sent) expect(holds(log, token), token).toBe(false);
  }, 60_000);
});

describe("the Lambda functions' error log", () => {
  /**
   * What `errorLog` writes (Powertools writes an error's JSON line to stderr) for the error the
   * expression `make` builds: run in a Node process of its own (through tsx), as a handler runs.
   */
  function logged(make: string): string {
    const code = `const { createLogger, errorLog } = await import(${JSON.stringify(LOGGING)});
errorLog(createLogger({ LOG_LEVEL: 'INFO' }))('request failed', ${make});`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    });
    expect(r.status, r.stderr).toBe(0);
    return r.stderr + r.stdout;
  }

  it('masks a token in the message and the stack', () => {
    const token = fakeToken();
    const out = logged(`new Error(${JSON.stringify(`no route for GET /v1/tokens/${token}`)})`);
    expect(out).toContain('hns_***');
    expect(holds(out, token)).toBe(false);
  });

  // Was a FAULT: errorLog masked the error's message and stack only, and Powertools writes its cause and
  // own properties too. Now maskError masks the whole error (lib/log/redact/mask-tokens.ts).
  it("masks a token in the error's cause, its aggregated errors and its own properties", () => {
    const token = fakeToken();
    const q = (text: string) => JSON.stringify(text);
    for (const [make, written] of [
      [
        `new Error('storage failed', { cause: new Error(${q(`upstream refused ${token}`)}) })`,
        '"message":"upstream refused hns_***"',
      ],
      [`new AggregateError([new Error(${q(`one ${token}`)})], 'several failed')`, 'several failed'],
      [
        `Object.assign(new Error('request failed'), { url: ${q(`/v1/tokens/${token}`)} })`,
        '"url":"/v1/tokens/hns_***"',
      ],
      [
        `Object.assign(new Error('s3'), { $response: { headers: { authorization: ${q(`Bearer ${token}`)} } } })`,
        '"authorization":"Bearer hns_***"',
      ],
      [`({ detail: [${q(token)}] })`, '"detail":["hns_***"]'],
    ]) {
      const out = logged(make!);
      expect(out).toContain('request failed');
      expect(out, make).toContain(written);
      expect(holds(out, token), make).toBe(false);
    }
  });
});
