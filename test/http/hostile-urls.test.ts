/**
 * Hostile paths and query strings against the real server of `hansard serve` (docs/api.md "Hostile input",
 * the `path:` and `query:` rows): ids that are not ids (traversals, encodings, lookalike dots), dot
 * segments, repeated, malformed and out-of-range parameters. The harness is test/support/hostile-input.ts.
 */
import { expect } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { describeHostile, type HostileCase, useHostileServer } from '../support/hostile-input.js';
import { rawExchange, request } from '../support/http.js';

const hostile = useHostileServer();
const { srv, probe, admin, chunkReq, get, H } = hostile;

const CASES: HostileCase[] = [
  ...[
    ['s_bad', 's_bad'],
    ['a lowercase ULID', `s_${newId('s').slice(2).toLowerCase()}`],
    ['27 characters', `${newId('s')}A`],
    ['an encoded ../..', '..%2F..%2Ftenants'],
    ['an encoded NUL', `s_%00${newId('s').slice(3)}`],
    ['unicode dots (one-dot leaders)', '%E2%80%A4%E2%80%A4'],
    ['fullwidth dots and slash', '%EF%BC%8E%EF%BC%8E%EF%BC%8F'],
    ['a double-encoded ../', '%252E%252E%252F'],
    ['encoded backslashes', '..%5C..%5Ctenants'],
    ['overlong UTF-8 dots', '%C0%AE%C0%AE'],
    ['an 8 KiB id', `s_${'A'.repeat(8 * 1024)}`],
  ].map(
    ([what, sid]): HostileCase => ({
      name: `a session id that is ${what}`,
      row: 'path: an id that is not s_/w_/tok_ + ULID (s_bad, lowercase, 27 characters, `..%2F..`, `%00`, unicode or fullwidth dots, double-encoded, backslashes)',
      status: 400,
      code: 'invalid_id',
      run: () => get(`/v1/sessions/${sid}/status`),
      check: (a) => expect(a.json.error.details).toEqual({ param: 'sid' }),
    }),
  ),
  {
    name: 'a writer id with an encoded ../',
    row: 'path: an id that is not s_/w_/tok_ + ULID (s_bad, lowercase, 27 characters, `..%2F..`, `%00`, unicode or fullwidth dots, double-encoded, backslashes)',
    status: 400,
    code: 'invalid_id',
    run: () => request(srv, chunkReq(probe.sid, '..%2F..%2Fstate.sqlite', 0, probe.bytes)),
    check: (a) => expect(a.json.error.details).toEqual({ param: 'w' }),
  },
  {
    name: 'a token id with an encoded ../',
    row: 'path: an id that is not s_/w_/tok_ + ULID (s_bad, lowercase, 27 characters, `..%2F..`, `%00`, unicode or fullwidth dots, double-encoded, backslashes)',
    status: 400,
    code: 'invalid_id',
    run: () => request(srv, { method: 'DELETE', path: '/v1/tokens/tok_..%2F..', token: admin() }),
    check: (a) => expect(a.json.error.details).toEqual({ param: 'id' }),
  },
  {
    name: 'a raw ../../ path (not normalized by the client)',
    row: 'path: dot segments, raw or `%2e%2e` (resolved before routing, as URLs are: they only reach another route, under its own auth)',
    status: 404,
    code: 'not_found',
    run: () =>
      rawExchange(srv.port, [`GET /v1/../../../../etc/passwd HTTP/1.1\r\n${H()}Connection: close\r\n\r\n`]),
  },
  {
    name: 'a %2e%2e path that resolves to the token listing, with a read token',
    row: 'path: dot segments, raw or `%2e%2e` (resolved before routing, as URLs are: they only reach another route, under its own auth)',
    status: 403,
    code: 'forbidden',
    ...(() => {
      let read = '';
      return {
        setup: async () => {
          const a = await request(srv, {
            method: 'POST',
            path: '/v1/tokens',
            token: admin(),
            json: { scopes: ['read'] },
          });
          read = a.json.token;
        },
        run: () =>
          rawExchange(srv.port, [
            `GET /v1/sessions/x/%2e%2e/%2e%2e/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${read}\r\nConnection: close\r\n\r\n`,
          ]),
      };
    })(),
  },

  // --- query strings ---
  {
    name: 'an offset given twice',
    row: 'query: a parameter given twice (`?offset=1&offset=2`)',
    status: 400,
    code: 'bad_request',
    run: () => request(srv, chunkReq(probe.sid, probe.w, `${probe.bytes.length}&offset=0`, probe.lines[1]!)),
    check: (a) => expect(a.json.error.details).toEqual({ param: 'offset' }),
  },
  {
    name: 'a limit given twice',
    row: 'query: a parameter given twice (`?offset=1&offset=2`)',
    status: 400,
    code: 'bad_request',
    run: () => get('/v1/sessions?limit=1&limit=200'),
  },
  {
    name: 'offset[]=0 instead of offset',
    row: 'query: a missing, non-decimal, negative or oversized offset or limit',
    status: 400,
    code: 'bad_request',
    run: () =>
      request(srv, {
        ...chunkReq(probe.sid, probe.w, 0, probe.bytes),
        path: `/v1/sessions/${probe.sid}/writers/${probe.w}/chunks?offset[]=0`,
      }),
  },
  ...[
    ['an offset of 20 digits', `/v1/sessions/SID/writers/W/chunks?offset=${'9'.repeat(20)}`],
    ['an offset past 2^53', '/v1/sessions/SID/writers/W/chunks?offset=9007199254740993'],
    ['a negative offset', '/v1/sessions/SID/writers/W/chunks?offset=-1'],
    ['an offset in hex', '/v1/sessions/SID/writers/W/chunks?offset=0x10'],
    ['a limit of 1e9', '/v1/sessions?limit=1e9'],
    ['a negative limit', '/v1/sessions?limit=-1'],
    ['a limit of 0', '/v1/sessions?limit=0'],
    ['a fractional limit', '/v1/sessions?limit=1.5'],
  ].map(
    ([what, path]): HostileCase => ({
      name: what!,
      row: 'query: a missing, non-decimal, negative or oversized offset or limit',
      status: 400,
      code: 'bad_request',
      run: () => {
        const p = path!.replace('SID', probe.sid).replace('/W/', `/${probe.w}/`);
        return request(srv, {
          method: p.includes('chunks') ? 'POST' : 'GET',
          path: p,
          token: admin(),
          body: p.includes('chunks') ? probe.lines[1]! : undefined,
        });
      },
    }),
  ),
  {
    name: 'an unknown replay format',
    row: 'query: an unknown `format` or `raw` value',
    status: 400,
    code: 'bad_request',
    run: () => get(`/v1/sessions/${probe.sid}/replay?format=xml`),
  },
  {
    name: 'raw=yes',
    row: 'query: an unknown `format` or `raw` value',
    status: 400,
    code: 'bad_request',
    run: () => get(`/v1/sessions/${probe.sid}/replay?raw=yes`),
  },
];

describeHostile('hostile paths and query strings against the real server', hostile, ['path', 'query'], CASES);
