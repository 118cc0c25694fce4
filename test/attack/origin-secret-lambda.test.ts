/**
 * Attack 5 on the replay edge's origin secret, through the real streaming Lambda entry
 * (functions/replay.ts: the module's own `handler`, built from process.env at import as at cold start,
 * and `createReplayHandler`), with function URL events (payload 2.0) as Lambda hands them over. The
 * event is where a caller's request becomes a Fetch Request (hono's aws-lambda adapter: `headers.set` per
 * key of `event.headers`, `event.cookies` joined into Cookie, a value with non-ASCII characters
 * percent-encoded), so this is where a header object with the secret under another case, two keys of
 * one name, a joined duplicate ("a,b" as function URLs join a repeated header), the secret in cookies or
 * the query, non-ASCII or CR/LF values, and odd methods or paths could slip past the guard.
 * No emulator: the stores point at a port nothing listens on.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../functions/config.js';
import type { createReplayHandler } from '../../functions/replay.js';
import {
  type ApiRequest,
  apiEvent,
  type LambdaAnswer,
  lambdaContext,
  ResponseStream,
  stubAwsLambdaGlobal,
  URL_DOMAIN,
} from '../../harness/lambda-events.js';
import { ORIGIN_SECRET_HEADER } from '../../lib/http/origin-secret.js';
import { newId } from '../../lib/log/index.js';

const SECRET = 'Pw5Jc9Xe3Kn7Bv1Lm4Qs8Dt2Gy6Hz0Ra5Uf9Ib3Oc7Nd1Me4';
const H = ORIGIN_SECRET_HEADER;
const env: Record<string, string> = {
  AWS_REGION: 'us-east-1',
  BUCKET_NAME: 'attack5-lambda',
  TABLE_NAME: 'attack5-lambda',
  S3_ENDPOINT: 'http://127.0.0.1:9',
  DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
  LOG_LEVEL: 'SILENT',
  AWS_ACCESS_KEY_ID: 'x',
  AWS_SECRET_ACCESS_KEY: 'x',
  EDGE_ORIGIN_SECRET: SECRET,
};

type StreamingHandler = (event: unknown, stream: ResponseStream, context: Context) => Promise<void>;
let moduleHandler: StreamingHandler;
let factory: typeof createReplayHandler;
let replay: StreamingHandler;

beforeAll(async () => {
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  stubAwsLambdaGlobal();
  const mod = await import('../../functions/replay.js');
  moduleHandler = mod.handler as unknown as StreamingHandler;
  factory = mod.createReplayHandler;
  replay = factory(env, {
    logger: new Logger({ serviceName: 'hansard', logLevel: 'SILENT' }),
  }) as unknown as StreamingHandler;
});
afterAll(() => {
  vi.unstubAllEnvs();
  delete (globalThis as { awslambda?: unknown }).awslambda;
});

/** A function URL event for `r`, then `edit` applied to it (raw header keys, cookies, method). */
function urlEvent(r: ApiRequest, edit: (e: ReturnType<typeof apiEvent>) => void = () => {}) {
  const e = apiEvent({ ...r, domain: URL_DOMAIN });
  edit(e);
  return e;
}

async function invoke(event: unknown, handler: StreamingHandler = replay): Promise<LambdaAnswer> {
  const stream = new ResponseStream();
  await handler(event, stream, lambdaContext('Hansard-ReplayFunction'));
  return stream.answer();
}

function expectForbidden(a: LambdaAnswer, what: string): void {
  expect(a.status, `${what}: ${a.text.slice(0, 200)}`).toBe(403);
  expect(a.text, what).not.toContain(SECRET);
  if (a.text !== '') expect(a.json?.error?.code, what).toBe('forbidden');
}

const get = (path: string, headers: Record<string, string> = {}): ApiRequest => ({
  method: 'GET',
  path,
  headers,
});

describe('the streaming replay handler behind the edge', () => {
  it('held: the module handler built from process.env at import refuses without the header, serves with it', async () => {
    expectForbidden(await invoke(urlEvent(get('/healthz')), moduleHandler), 'module handler');
    expect((await invoke(urlEvent(get('/healthz', { [H]: SECRET })), moduleHandler)).status).toBe(200);
    const replayPath = `/v1/sessions/${newId('s')}/replay`;
    expectForbidden(await invoke(urlEvent(get(replayPath)), moduleHandler), 'module replay');
    expect((await invoke(urlEvent(get(replayPath, { [H]: SECRET })), moduleHandler)).status).toBe(401);
  });

  it('held: the secret under a key in another case passes; a wrong value under any case is refused', async () => {
    for (const name of ['X-Hansard-Origin-Secret', H.toUpperCase(), 'x-Hansard-origin-secret']) {
      const ok = urlEvent(get('/healthz'), (e) => {
        e.headers[name] = SECRET;
      });
      expect((await invoke(ok)).status, name).toBe(200);
      const bad = urlEvent(get('/healthz'), (e) => {
        e.headers[name] = SECRET.toLowerCase();
      });
      expectForbidden(await invoke(bad), name);
    }
  });

  it('held: a repeated header as a function URL delivers it ("a,b", "a, b") is refused, even "secret,secret"', async () => {
    for (const v of [
      `${SECRET},${SECRET}`,
      `${SECRET}, ${SECRET}`,
      `${SECRET},x`,
      `x,${SECRET}`,
      `${SECRET},`,
    ]) {
      expectForbidden(await invoke(urlEvent(get('/healthz', { [H]: v }))), v);
    }
  });

  it('held: two keys of the header in one event: the last wins, so no value but the secret itself passes', async () => {
    // (A function URL lower-cases and joins repeated headers, so it never sends this; a caller would
    // need the secret anyway.)
    const both = (first: string, second: string) =>
      urlEvent(get('/healthz'), (e) => {
        e.headers[H] = first;
        e.headers[H.toUpperCase()] = second;
      });
    expect((await invoke(both('wrong', SECRET))).status).toBe(200);
    expectForbidden(await invoke(both(SECRET, 'wrong')), 'secret then wrong');
    expectForbidden(await invoke(both('wrong', 'wrong')), 'wrong twice');
  });

  it('held: the secret in cookies, the query string or the Authorization header is refused', async () => {
    const cookies = urlEvent(get('/healthz'), (e) => {
      e.cookies = [`${H}=${SECRET}`, `secret=${SECRET}`];
    });
    expectForbidden(await invoke(cookies), 'cookies');
    const query = urlEvent({ ...get('/healthz'), query: `${H}=${SECRET}` });
    expectForbidden(await invoke(query), 'query');
    const auth = urlEvent(get('/healthz', { authorization: `Bearer ${SECRET}` }));
    expectForbidden(await invoke(auth), 'authorization');
  });

  it('held: non-ASCII values (percent-encoded by the adapter) never equal the secret', async () => {
    for (const v of [
      `${SECRET}\u2713`,
      `${SECRET.slice(0, 5)}\uff21${SECRET.slice(6)}`, // a fullwidth letter in place of one
      `${SECRET}\u00e9`,
      '\u{1F600}'.repeat(24),
    ]) {
      expectForbidden(await invoke(urlEvent(get('/healthz', { [H]: v }))), JSON.stringify(v));
    }
    // A lone surrogate makes the adapter's encodeURIComponent throw (URIError) before the app: hono's
    // streamHandle writes "Internal Server Error" with no status line of its own; nothing is served.
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {});
    const lone = await invoke(urlEvent(get(`/v1/sessions/${newId('s')}/replay`, { [H]: `${SECRET}\ud800` })));
    printed.mockRestore();
    expect(lone.status).toBe(0);
    expect(lone.text).toBe('Internal Server Error');
  });

  it('held: a CR/LF or NUL inside a header value stops the adapter before the app: nothing is served', async () => {
    // hono's streamHandle console.errors the Headers TypeError, whose message quotes the whole invalid
    // value (here the secret, in another header a bearer token: not the Powertools log, which never
    // holds a header). Only reachable if a function URL delivered a CR, LF or NUL inside a value.
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {});
    for (const v of [`${SECRET}\r\nx: y`, `wrong\r\n${H}: ${SECRET}`, `\u0000${SECRET}`, `${SECRET}\u0000`]) {
      const a = await invoke(urlEvent(get(`/v1/sessions/${newId('s')}/replay`, { [H]: v })));
      // hono's streamHandle catches the Headers TypeError and writes this before any metadata
      expect(a.status, JSON.stringify(v)).toBe(0);
      expect(a.text).toBe('Internal Server Error');
    }
    expect(printed).toHaveBeenCalledTimes(4);
    expect(String(printed.mock.calls[0]![1])).toContain(SECRET);
    printed.mockRestore();
    // Leading and trailing HTTP whitespace (tab, CR, LF, space) is trimmed by Headers: such a value IS
    // the secret, so it passes (to the token check: 401), as any HTTP server would read it.
    for (const v of [`${SECRET}\n`, `\t${SECRET}\r\n`, ` ${SECRET} `]) {
      const a = await invoke(urlEvent(get(`/v1/sessions/${newId('s')}/replay`, { [H]: v })));
      expect(a.status, JSON.stringify(v)).toBe(401);
    }
    for (const v of ['wrong\n', `\n${SECRET.slice(1)}`]) {
      expectForbidden(await invoke(urlEvent(get('/healthz', { [H]: v }))), JSON.stringify(v));
    }
  });

  it('held: every method and odd path in the event is refused without the secret', async () => {
    for (const method of ['OPTIONS', 'POST', 'PUT', 'DELETE', 'PATCH', 'PROPFIND', 'FOO']) {
      expectForbidden(await invoke(urlEvent({ method, path: '/healthz' })), method);
    }
    // HEAD: the status alone (no body to read)
    for (const path of ['/healthz', `/v1/sessions/${newId('s')}/replay`]) {
      const stream = new ResponseStream();
      await replay(urlEvent({ method: 'HEAD', path }), stream, lambdaContext('Hansard-ReplayFunction'));
      expect(stream.metadata?.statusCode, `HEAD ${path}`).toBe(403);
      expect(Buffer.concat(stream.parts).length).toBe(0);
    }
    for (const path of ['//healthz', '/healthz/', '/%68ealthz', '/healthz?', '/', `/${'x'.repeat(8000)}`]) {
      expectForbidden(await invoke(urlEvent(get(path))), path.slice(0, 40));
    }
  });

  it('held: a secret under 32 characters fails the handler at start-up rather than opening the URL', () => {
    expect(() => factory({ ...env, EDGE_ORIGIN_SECRET: 'x'.repeat(31) })).toThrow(ConfigError);
  });
});
