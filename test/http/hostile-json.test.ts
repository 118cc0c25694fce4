/**
 * Hostile JSON bodies against the real server of `hansard serve` (docs/api.md "Hostile input", the `JSON
 * body:` and `status:` rows): status reports to a fresh session (a refused one must not create it) and a
 * token request, as bytes no client library would send. The harness is test/support/hostile-input.ts.
 */
import { expect } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { deep, describeHostile, type HostileCase, useHostileServer } from '../support/hostile-input.js';
import { type Req, request } from '../support/http.js';

const hostile = useHostileServer();
const { srv, admin, get } = hostile;

const enc = new TextEncoder();

function statusReq(body: string | Uint8Array, headers: Record<string, string> = {}): Req {
  return {
    method: 'POST',
    path: `/v1/sessions/${newId('s')}/status`,
    token: admin(),
    body,
    headers: { 'content-type': 'application/json', ...headers },
  };
}

/** A POST of a status body to a fresh session. */
const status = (body: string | Uint8Array, headers?: Record<string, string>) => () =>
  request(srv, statusReq(body, headers));

const statusOf = async (sid: string) => (await get(`/v1/sessions/${sid}/status`)).json;

const CASES: HostileCase[] = [
  {
    name: 'a status body that is not JSON',
    row: 'JSON body: not JSON, a JSON array, string or null',
    status: 400,
    code: 'invalid_body',
    run: status('state=working'),
  },
  {
    name: 'a status body that is a JSON array',
    row: 'JSON body: not JSON, a JSON array, string or null',
    status: 400,
    code: 'invalid_body',
    run: status('[{"state":"working"}]'),
  },
  {
    name: 'a status body that is a JSON string',
    row: 'JSON body: not JSON, a JSON array, string or null',
    status: 400,
    code: 'invalid_body',
    run: status('"working"'),
  },
  {
    name: 'a status body that is null',
    row: 'JSON body: not JSON, a JSON array, string or null',
    status: 400,
    code: 'invalid_body',
    run: status('null'),
  },
  {
    name: 'a status body with every field of a wrong type',
    row: 'JSON body: a field of a wrong type, an unknown field',
    status: 400,
    code: 'invalid_body',
    run: status('{"state":1,"note":["x"],"events":{"kind":"plan"}}'),
    check: (a) => {
      const paths = a.json.error.details.issues.map((i: { path: string }) => i.path).sort();
      expect(paths).toEqual(['events', 'note', 'state']);
    },
  },
  {
    name: 'a status body with invalid UTF-8',
    row: 'JSON body: invalid UTF-8',
    status: 400,
    code: 'invalid_body',
    run: status(
      Buffer.concat([
        Buffer.from('{"state":"working","note":"'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}'),
      ]),
    ),
    check: (a) => expect(a.json.error.message).toContain('UTF-8'),
  },
  {
    name: 'a status body with an escaped lone surrogate',
    row: 'JSON body: a lone surrogate, escaped (`"\\ud800"`) or as raw bytes',
    status: 400,
    code: 'invalid_body',
    run: status('{"state":"working","note":"x\\ud800y"}'),
    check: (a) => expect(a.json.error.message).toContain('surrogate'),
  },
  {
    name: 'a status body with an escaped lone surrogate in a key',
    row: 'JSON body: a lone surrogate, escaped (`"\\ud800"`) or as raw bytes',
    status: 400,
    code: 'invalid_body',
    run: status('{"state":"working","\\udc00":1}'),
  },
  {
    name: 'a status body with a lone surrogate as raw bytes (ED A0 80)',
    row: 'JSON body: a lone surrogate, escaped (`"\\ud800"`) or as raw bytes',
    status: 400,
    code: 'invalid_body',
    run: status(
      Buffer.concat([
        Buffer.from('{"state":"working","note":"'),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from('"}'),
      ]),
    ),
  },
  {
    name: 'a status body with a surrogate pair (an emoji, escaped) is fine',
    row: 'JSON body: a surrogate pair, escaped',
    status: 201,
    accepted: true,
    run: status('{"state":"working","note":"ship \\ud83d\\ude80"}'),
    check: (a) => expect(a.json.note).toBe('ship 🚀'),
  },
  {
    name: 'a status body with a raw NUL byte',
    row: 'JSON body: a raw NUL byte',
    status: 400,
    code: 'invalid_body',
    run: status(
      Buffer.concat([Buffer.from('{"state":"working","note":"a'), Buffer.from([0]), Buffer.from('b"}')]),
    ),
  },
  {
    name: 'a status note with an escaped NUL is kept exactly',
    row: 'JSON body: an escaped NUL (`"\\u0000"`) in a string',
    status: 201,
    accepted: true,
    run: status('{"state":"working","note":"a\\u0000b"}'),
    check: async (a) => {
      expect(a.json.note).toBe('a\u0000b');
      expect((await statusOf(a.json.sid)).note).toBe('a\u0000b');
    },
  },
  {
    name: 'a status body nested 10,000 deep',
    row: 'JSON body: nested 10,000 deep',
    status: 400,
    code: 'invalid_body',
    run: status(`{"state":${deep(10_000)}}`),
  },
  {
    name: 'a status body nested 10,000 deep under an unknown key',
    row: 'JSON body: nested 10,000 deep',
    status: 400,
    code: 'invalid_body',
    run: status(`{"state":"working","x":${deep(10_000)}}`),
  },
  {
    name: 'a note of 241 characters',
    row: 'status: a note over 240 characters, a ref over 160, more than 4 events or evidence items',
    status: 400,
    code: 'invalid_body',
    run: status(JSON.stringify({ state: 'working', note: 'n'.repeat(241) })),
    check: (a) => expect(a.json.error.details.issues[0].path).toBe('note'),
  },
  {
    name: 'a note of exactly 240 characters',
    row: 'status: a note of exactly 240 characters',
    status: 201,
    accepted: true,
    run: status(JSON.stringify({ state: 'working', note: 'n'.repeat(240) })),
  },
  {
    name: 'an evidence ref of 161 characters',
    row: 'status: a note over 240 characters, a ref over 160, more than 4 events or evidence items',
    status: 400,
    code: 'invalid_body',
    run: status(
      JSON.stringify({
        state: 'done',
        events: [
          { kind: 'evidence', evidence: [{ type: 'file', ref: 'r'.repeat(161), result: 'modified' }] },
        ],
      }),
    ),
    check: (a) => expect(a.json.error.details.issues[0].path).toBe('events.0.evidence.0.ref'),
  },
  {
    name: 'five events',
    row: 'status: a note over 240 characters, a ref over 160, more than 4 events or evidence items',
    status: 400,
    code: 'invalid_body',
    run: status(JSON.stringify({ state: 'done', events: Array(5).fill({ kind: 'plan' }) })),
  },
  {
    name: 'duplicate keys: the last one wins, in the answer and in what is stored',
    row: 'JSON body: duplicate keys',
    status: 201,
    accepted: true,
    run: status('{"state":"working","note":"first","state":"done","note":"second"}'),
    check: async (a) => {
      expect(a.json).toMatchObject({ state: 'done', note: 'second' });
      expect(await statusOf(a.json.sid)).toMatchObject({ state: 'done', note: 'second' });
      const board = await get('/v1/board');
      const row = board.json.sessions.find((s: { sid: string }) => s.sid === a.json.sid);
      expect(row).toMatchObject({ state: 'done', note: 'second' });
    },
  },
  {
    name: 'a __proto__ key in a status body',
    row: 'JSON body: `__proto__`, `constructor` or `prototype` keys',
    status: 400,
    code: 'invalid_body',
    run: status('{"state":"working","__proto__":{"polluted":true}}'),
    check: (a) => expect(JSON.stringify(a.json.error.details)).toContain('__proto__'),
  },
  {
    name: 'a constructor.prototype key in a status body',
    row: 'JSON body: `__proto__`, `constructor` or `prototype` keys',
    status: 400,
    code: 'invalid_body',
    run: status('{"state":"working","constructor":{"prototype":{"polluted":true}}}'),
  },
  {
    name: 'a __proto__ key in a token request',
    row: 'JSON body: `__proto__`, `constructor` or `prototype` keys',
    status: 400,
    code: 'invalid_body',
    run: () =>
      request(srv, {
        method: 'POST',
        path: '/v1/tokens',
        token: admin(),
        body: '{"scopes":["read"],"__proto__":{"scopes":["admin"]}}',
        headers: { 'content-type': 'application/json' },
      }),
  },
  {
    name: 'an empty status body',
    row: 'JSON body: empty or only whitespace',
    status: 400,
    code: 'empty_body',
    run: status(''),
  },
  {
    name: 'a status body of whitespace',
    row: 'JSON body: empty or only whitespace',
    status: 400,
    code: 'empty_body',
    run: status(' \r\n\t '),
  },
  {
    name: 'a status body over 256 KiB',
    row: 'JSON body: over 256 KiB (declared or streamed)',
    status: 413,
    code: 'payload_too_large',
    run: status(JSON.stringify({ state: 'working', note: 'n'.repeat(300 * 1024) })),
  },
  {
    name: 'a streamed status body over 256 KiB (no Content-Length)',
    row: 'JSON body: over 256 KiB (declared or streamed)',
    status: 413,
    code: 'payload_too_large',
    run: async () => {
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 0) controller.enqueue(enc.encode('{"state":"working","note":"'));
          else if (sent > 40) controller.close();
          else controller.enqueue(enc.encode('n'.repeat(8192)));
          sent += 1;
        },
      });
      const res = await fetch(`${srv.url}/v1/sessions/${newId('s')}/status`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin()}`, 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit);
      const bytes = Buffer.from(await res.arrayBuffer());
      const text = bytes.toString('utf8');
      return { status: res.status, headers: res.headers, bytes, text, json: JSON.parse(text) };
    },
  },
  {
    name: 'a status body sent as text/plain',
    row: 'JSON body: another content type (the type is not checked; the body must be JSON)',
    status: 201,
    accepted: true,
    run: status('{"state":"working"}', { 'content-type': 'text/plain' }),
  },
  {
    name: 'a status body sent as a form',
    row: 'JSON body: another content type (the type is not checked; the body must be JSON)',
    status: 400,
    code: 'invalid_body',
    run: status('state=working', { 'content-type': 'application/x-www-form-urlencoded' }),
  },
];

describeHostile('hostile JSON bodies against the real server', hostile, ['JSON body', 'status'], CASES);
