/**
 * Attack 5 on the replay edge's origin secret (functions/app.ts, lib/http/origin-secret.ts): the replay
 * function, given EDGE_ORIGIN_SECRET, must answer 403 `forbidden` to every request that does not carry
 * `x-hansard-origin-secret: <secret>` exactly, before routing or authentication. Tried here through the
 * app (`app.request`) as a caller of the function URL would: the header's name in other cases and
 * look-alike names, the header twice (the Fetch `Headers` join duplicates with ", ", as Node's HTTP
 * parser does for an unknown header), the secret in the query string, a cookie or another header, every
 * method (HEAD, OPTIONS, unknown ones), odd paths (`//healthz`, `/healthz/`, encoded, 100 KB long), very
 * large and non-ASCII (Latin-1) values; whether the 403 or the request log echo the secret or what the
 * caller sent, what headers the 403 has, and whether the API function (serves 'all') is touched.
 * No emulator: the stores point at a port nothing listens on, so a request that got past the guard and
 * reached a store would fail loudly (and one that passes stops at the missing bearer token).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it } from 'vitest';
import { createLambdaApp, type Serves } from '../../functions/app.js';
import { createClients } from '../../functions/clients.js';
import { parseConfig } from '../../functions/config.js';
import { ORIGIN_SECRET_HEADER } from '../../lib/http/origin-secret.js';
import { newId } from '../../lib/log/index.js';

const SECRET = 'Gx4Tn8Wq2Lp6Rz0Vb3Mk7Yd1Hs5Fj9Ca2Ue6Io0Np4Qr8St1';
const base = {
  AWS_REGION: 'us-east-1',
  BUCKET_NAME: 'attack5-origin',
  TABLE_NAME: 'attack5-origin',
  S3_ENDPOINT: 'http://127.0.0.1:9',
  DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
};

/** Every line the function's logger printed (info and error), as JSON text. */
const logged: string[] = [];
const logger = {
  addContext: () => {},
  info: (m: string, o?: unknown) => logged.push(JSON.stringify({ m, o })),
  error: (m: string, o?: unknown) => logged.push(JSON.stringify({ m, o: String(o) })),
} as unknown as Logger;

function app(serves: Serves, env: Record<string, string> = { EDGE_ORIGIN_SECRET: SECRET }, log = logger) {
  const config = parseConfig({ ...base, ...env });
  return createLambdaApp({ config, clients: createClients(config), logger: log, serves });
}

const replayPath = () => `/v1/sessions/${newId('s')}/replay`;
const H = ORIGIN_SECRET_HEADER;

async function expectForbidden(res: Response, what: string, sent: string[] = []): Promise<void> {
  expect(res.status, what).toBe(403);
  const text = await res.text();
  expect(text, what).not.toContain(SECRET);
  for (const s of sent.filter((x) => x.length >= 8))
    expect(text, `${what} echoes what was sent`).not.toContain(s);
  for (const [k, v] of res.headers) expect(`${k}: ${v}`, what).not.toContain(SECRET);
  if (text === '') return; // HEAD
  const body = JSON.parse(text) as { error: { code: string } };
  expect(body.error.code, what).toBe('forbidden');
}

describe('the origin-secret guard of the replay function, attacked through the app', () => {
  const replay = app('replay');

  it('held: the header name is matched in any case, so a right value passes and a wrong one does not', async () => {
    for (const name of [H, H.toUpperCase(), 'X-Hansard-Origin-Secret', 'x-HANSARD-origin-SECRET']) {
      const ok = await replay.request('/healthz', { headers: { [name]: SECRET } });
      expect(ok.status, name).toBe(200);
      const bad = await replay.request('/healthz', { headers: { [name]: `${SECRET.slice(0, -1)}0` } });
      await expectForbidden(bad, name);
    }
  });

  it('held: look-alike header names carrying the secret are refused', async () => {
    for (const name of [
      `${H}s`,
      'x_hansard_origin_secret',
      'x-hansard-origin',
      'hansard-origin-secret',
      'origin-secret',
      `x-forwarded-${H}`,
      'x-amz-cf-secret',
      'x-hansard-origin-secret-1',
    ]) {
      await expectForbidden(await replay.request('/healthz', { headers: { [name]: SECRET } }), name);
    }
  });

  it('held: the header sent twice joins to "secret, secret" (or "secret, wrong"), which is refused', async () => {
    for (const pair of [
      [SECRET, SECRET],
      [SECRET, 'wrong-value-here'],
      ['wrong-value-here', SECRET],
      ['', SECRET],
      [SECRET, ''],
    ]) {
      const headers = new Headers();
      for (const v of pair) headers.append(H, v);
      // how the Fetch Headers (and so Hono's c.req.header) see it
      expect(headers.get(H)).toBe(pair.join(', '));
      await expectForbidden(await replay.request('/healthz', { headers }), JSON.stringify(pair));
      await expectForbidden(await replay.request(replayPath(), { headers }), JSON.stringify(pair));
    }
    // the same with the second copy under another case of the name
    const mixed = new Headers();
    mixed.append(H, SECRET);
    mixed.append(H.toUpperCase(), SECRET);
    await expectForbidden(await replay.request('/healthz', { headers: mixed }), 'two cases');
  });

  it('held: the secret in the query string, a cookie, Authorization, Origin or Referer is refused', async () => {
    const q = encodeURIComponent(SECRET);
    for (const path of [
      `/healthz?${H}=${q}`,
      `/healthz?secret=${q}`,
      `${replayPath()}?${H}=${q}&token=${q}`,
      `/healthz#${H}=${q}`,
    ]) {
      await expectForbidden(await replay.request(path), path);
    }
    const carriers: Array<Record<string, string>> = [
      { cookie: `${H}=${SECRET}` },
      { cookie: `a=b; ${H}=${SECRET}` },
      { authorization: `Basic ${Buffer.from(`${H}:${SECRET}`).toString('base64')}` },
      { authorization: SECRET },
      { origin: SECRET },
      { referer: `https://x.example/?${H}=${SECRET}` },
      { 'x-forwarded-for': SECRET },
      { via: SECRET },
    ];
    for (const headers of carriers) {
      await expectForbidden(await replay.request('/healthz', { headers }), JSON.stringify(headers));
    }
  });

  it('held: every method is refused without the secret (HEAD, OPTIONS, PUT, DELETE, PATCH, unknown)', async () => {
    const methods = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'DELETE', 'PATCH', 'PROPFIND', 'FOO', 'get'];
    for (const method of methods) {
      for (const path of ['/healthz', replayPath(), '/v1/keys', '/']) {
        const res = await replay.request(path, { method, headers: { origin: 'https://evil.example' } });
        await expectForbidden(res, `${method} ${path}`);
        // nothing like a CORS answer that would let a page read anything
        expect(res.headers.get('access-control-allow-origin'), `${method} ${path}`).toBeNull();
      }
    }
    // with the secret, the route filter still refuses what the URL does not serve
    for (const method of ['OPTIONS', 'PUT', 'DELETE', 'PATCH', 'PROPFIND', 'FOO']) {
      const res = await replay.request('/healthz', { method, headers: { [H]: SECRET } });
      expect(res.status, method).toBe(404);
    }
  });

  it('held: odd paths (//healthz, /healthz/, case, encoded, dot segments, 100 KB) are refused', async () => {
    const sid = newId('s');
    for (const path of [
      '//healthz',
      '/healthz/',
      '/HEALTHZ',
      '/%68ealthz',
      '/healthz%2F',
      '/healthz;x',
      '/./healthz',
      '/v1/../healthz',
      '/v1/%2e%2e/healthz',
      `//v1/sessions/${sid}/replay`,
      `/v1/sessions/${sid}/replay/`,
      `/v1/sessions/${sid}%2Freplay`,
      '/%00',
      '/\u00e9',
      `/${'a'.repeat(100_000)}`,
      `/v1/sessions/${'s'.repeat(50_000)}/replay`,
    ]) {
      const res = await replay.request(path);
      await expectForbidden(res, path.slice(0, 80));
    }
  });

  it('held: very large header values (64 KiB, 1 MiB, the secret then 1 MiB) are refused quickly', async () => {
    for (const value of [
      'a'.repeat(64 * 1024),
      'b'.repeat(1024 * 1024),
      `${SECRET}${'c'.repeat(1024 * 1024)}`,
    ]) {
      const started = performance.now();
      const res = await replay.request('/healthz', { headers: { [H]: value } });
      await expectForbidden(res, `${value.length} chars`, [value.slice(-64)]);
      expect(performance.now() - started).toBeLessThan(5_000);
    }
  });

  it('held: Latin-1 (non-ASCII) header values, and the secret with a byte changed to one, are refused', async () => {
    for (const value of [
      `${SECRET}\u00e9`,
      `\u00e9${SECRET}`,
      `${SECRET.slice(0, 10)}\u00ff${SECRET.slice(11)}`,
      // the secret's letters with their high bit set (a byte-wise confusion would read them as the secret)
      [...SECRET].map((ch) => String.fromCharCode(ch.charCodeAt(0) | 0x80)).join(''),
      '\u00ff'.repeat(48),
    ]) {
      const res = await replay.request('/healthz', { headers: { [H]: value } });
      await expectForbidden(res, JSON.stringify(value));
    }
  });

  it('held: the 403 and the request log carry neither the secret nor what the caller sent', async () => {
    const sent = `attacker-guess-${'9'.repeat(40)}`;
    logged.length = 0;
    const res = await replay.request(`/v1/sessions/${newId('s')}/replay?token=${sent}`, {
      headers: { [H]: sent, authorization: `Bearer ${sent}` },
    });
    await expectForbidden(res, 'guess', [sent]);
    expect(logged.length).toBeGreaterThan(0);
    for (const l of logged) {
      expect(l).not.toContain(SECRET);
      expect(l).not.toContain(sent);
    }
    const line = JSON.parse(logged.at(-1)!) as { m: string; o: { status: number; route: string } };
    expect(line.m).toBe('request');
    expect(line.o.status).toBe(403);
    // what the 403 does say: which header is wanted (not its value)
    const body = JSON.parse(await (await replay.request('/healthz')).text()) as {
      error: { details: unknown; message: string };
    };
    expect(body.error.details).toEqual({ header: H });
  });

  it('held (was FAULT): the 403 forbidden and the route filter 404 carry Cache-Control: no-store and nosniff like every API answer', async () => {
    // lib/http/app.ts privateAnswer ("Headers of every answer of the API ..., errors included", issue 8.6)
    // ran inside createAwsApp, after the guard: the guard's 403 (and the replay route filter's 404) came
    // back with neither header. functions/app.ts now applies it first on the replay function.
    const refused = await replay.request('/v1/status', { method: 'POST', headers: { [H]: SECRET } });
    expect(refused.status).toBe(404);
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
    const res = await replay.request('/healthz');
    expect(res.status).toBe(403);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('held: the answer that got past the guard has them (for comparison with the FAULT above)', async () => {
    const res = await replay.request(replayPath(), { headers: { [H]: SECRET } });
    expect(res.status).toBe(401);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('held: the API function (serves all) never asks for the header, even with EDGE_ORIGIN_SECRET in its env', async () => {
    for (const env of [{}, { EDGE_ORIGIN_SECRET: SECRET }] as Array<Record<string, string>>) {
      const api = app('all', env);
      expect((await api.request('/healthz')).status).toBe(200);
      expect((await api.request('/healthz', { headers: { [H]: 'wrong' } })).status).toBe(200);
      expect((await api.request(replayPath())).status).toBe(401);
    }
  });

  it('held: a blank secret fails closed (HTTP trims header values: nothing can match 32 spaces)', async () => {
    const blank = app('replay', { EDGE_ORIGIN_SECRET: ' '.repeat(40) });
    for (const v of [' '.repeat(40), '', ' ']) {
      const res = await blank.request('/healthz', { headers: { [H]: v } });
      expect(res.status, JSON.stringify(v)).toBe(403);
    }
    expect((await blank.request('/healthz')).status).toBe(403);
  });

  it('held (by design): an empty EDGE_ORIGIN_SECRET reads as unset, and the replay URL is then open', async () => {
    // config.ts `present`: Lambda cannot unset a variable, only empty it. The stack never sets it empty
    // (a generated 48-character secret), so this is only an operator's switch, noted for the report.
    const open = app('replay', { EDGE_ORIGIN_SECRET: '' });
    expect((await open.request('/healthz')).status).toBe(200);
  });
});
