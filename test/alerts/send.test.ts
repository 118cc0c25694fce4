/**
 * The address rule and one HTTP attempt (lib/service/alerts/url-guard.ts, send.ts; issue 28 item 2): a
 * private, loopback or link-local target is refused when added and on the connection itself, redirects
 * are not followed, an attempt has a time limit. Real sockets on loopback.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson } from '../../lib/service/alerts/send.js';
import { checkTargetUrl, isPublicAddress } from '../../lib/service/alerts/url-guard.js';
import { AppError } from '../../lib/service/shared/errors.js';

describe('isPublicAddress', () => {
  it.each([
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.16.0.1', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['::1', false],
    ['fe80::1', false],
    ['fd00::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['::127.0.0.1', false],
    ['64:ff9b::7f00:1', false],
    ['fc00::1', false],
    ['::', false],
    ['not an ip', false],
    ['8.8.8.8', true],
    ['1.1.1.1', true],
    ['2606:4700:4700::1111', true],
    ['::ffff:8.8.8.8', true],
  ])('%s → %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('checkTargetUrl', () => {
  const refused = async (url: string, allow = false) => {
    try {
      await checkTargetUrl(url, allow);
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('invalid_target');
      expect((err as AppError).status).toBe(400);
      return (err as AppError).message;
    }
    throw new Error(`${url} was accepted`);
  };

  it('refuses loopback, private and link-local hosts, by name or literal, naming the serve flag', async () => {
    expect(await refused('http://127.0.0.1:9/x')).toMatch(/127\.0\.0\.1.*--allow-private-alert-targets/);
    expect(await refused('http://localhost:9/x')).toMatch(
      /^the target's host localhost resolves to (127\.0\.0\.1|::1), a loopback, link-local or private address/,
    );
    expect(await refused('http://[::1]:9/x')).toMatch(/::1/);
    expect(await refused('http://169.254.169.254/latest/meta-data')).toMatch(/169\.254\.169\.254/);
    expect(await refused('https://10.0.0.5/hook')).toMatch(/10\.0\.0\.5/);
    expect(await refused('http://[::ffff:127.0.0.1]/')).toMatch(/private/);
  });

  it('refuses what is not an http(s) URL, or carries credentials, even with the flag', async () => {
    expect(await refused('ftp://example.com/x', true)).toMatch(/https:\/\//);
    expect(await refused('file:///etc/passwd', true)).toMatch(/file:/);
    expect(await refused('not a url', true)).toMatch(/not a URL/);
    expect(await refused('https://user:pw@example.com/x', true)).toMatch(/user name or password/);
  });

  it('accepts a private target when the operator allowed them, and a public IP literal always', async () => {
    expect((await checkTargetUrl('http://127.0.0.1:9/x', true)).href).toBe('http://127.0.0.1:9/x');
    expect((await checkTargetUrl('https://8.8.8.8/hook', false)).hostname).toBe('8.8.8.8');
  });
});

describe('postJson', () => {
  let server: Server;
  let base: string;
  const got: { path: string; headers: Record<string, unknown>; body: string }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        got.push({ path: req.url ?? '', headers: req.headers, body });
        if (req.url === '/ok') return res.writeHead(204).end();
        if (req.url === '/fail') return res.writeHead(503).end('  down\n for   maintenance ');
        if (req.url === '/redirect') return res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
        if (req.url === '/big') return res.writeHead(500).end('x'.repeat(100_000));
        // /hang: never answers
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const o = { timeoutMs: 2_000, allowPrivate: true };

  it('POSTs the JSON body with the headers and content-type; a 2xx has no error', async () => {
    const r = await postJson(new URL(`${base}/ok`), { 'webhook-id': 'msg_x' }, '{"a":1}', o);
    expect(r).toEqual({ status: 204, error: null });
    const last = got.at(-1)!;
    expect(last.body).toBe('{"a":1}');
    expect(last.headers['webhook-id']).toBe('msg_x');
    expect(last.headers['content-type']).toBe('application/json');
  });

  it("a 5xx is a failure with the answer's first words", async () => {
    expect(await postJson(new URL(`${base}/fail`), {}, '{}', o)).toEqual({
      status: 503,
      error: 'HTTP 503: down for maintenance',
    });
    const big = await postJson(new URL(`${base}/big`), {}, '{}', o);
    expect(big.status).toBe(500);
    expect(big.error!.length).toBeLessThan(260);
  });

  it('does not follow a redirect: a failure naming where it pointed', async () => {
    const before = got.length;
    const r = await postJson(new URL(`${base}/redirect`), {}, '{}', o);
    expect(r.status).toBe(302);
    expect(r.error).toMatch(/redirect to http:\/\/169\.254\.169\.254\/ not followed/);
    expect(got.length).toBe(before + 1);
  });

  it('gives up on a target that does not answer within the time limit', async () => {
    const t0 = performance.now();
    const r = await postJson(new URL(`${base}/hang`), {}, '{}', { timeoutMs: 300, allowPrivate: true });
    expect(r.status).toBeNull();
    expect(r.error).toMatch(/no answer within 300 ms/);
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  it('refuses the connection to a loopback address unless allowed (checked after DNS, at connect)', async () => {
    const before = got.length;
    const r = await postJson(new URL(`${base}/ok`), {}, '{}', { timeoutMs: 2_000, allowPrivate: false });
    expect(r.status).toBeNull();
    expect(r.error).toMatch(/refused: .*not allowed/);
    expect(got.length).toBe(before);
  });

  it('an unreachable port is a failure, not a throw', async () => {
    const r = await postJson(new URL('http://127.0.0.1:1/x'), {}, '{}', o);
    expect(r.status).toBeNull();
    expect(r.error).toMatch(/ECONNREFUSED/);
  });
});
