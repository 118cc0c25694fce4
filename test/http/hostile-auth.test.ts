/**
 * Hostile credentials against the real server of `hansard serve` (docs/api.md "Hostile input", the `auth:`
 * row): a token in the query string of an API route, a wrong scheme, a token never issued. The harness is
 * test/support/hostile-input.ts.
 */
import { describeHostile, type HostileCase, useHostileServer } from '../support/hostile-input.js';
import { request } from '../support/http.js';

const hostile = useHostileServer();
const { srv, admin } = hostile;

const CASES: HostileCase[] = [
  ...['token', 'access_token'].flatMap((param) =>
    ['/v1/sessions', '/v1/board'].map(
      (path): HostileCase => ({
        name: `a token in ?${param}= on ${path}`,
        row: 'auth: a token in the query string of an API route (never read), a wrong scheme, an unknown token',
        status: 401,
        code: 'unauthorized',
        run: () => request(srv, { method: 'GET', path: `${path}?${param}=${admin()}` }),
      }),
    ),
  ),
  {
    name: 'Basic instead of Bearer',
    row: 'auth: a token in the query string of an API route (never read), a wrong scheme, an unknown token',
    status: 401,
    code: 'unauthorized',
    run: () =>
      request(srv, { method: 'GET', path: '/v1/sessions', headers: { authorization: `Basic ${admin()}` } }),
  },
  {
    name: 'a well-formed token that was never issued',
    row: 'auth: a token in the query string of an API route (never read), a wrong scheme, an unknown token',
    status: 401,
    code: 'unauthorized',
    run: () => request(srv, { method: 'GET', path: '/v1/sessions', token: `hns_${'z'.repeat(43)}` }),
  },
];

describeHostile('hostile credentials against the real server', hostile, ['auth'], CASES);
