/**
 * Hostile work requests against the real server of `hansard serve` (docs/api.md "Hostile input", the
 * `work:` rows; issue 13): bodies no client library would send, content an agent must not report (seed
 * 004), and requests on a work item by someone else. The harness is test/support/hostile-input.ts; every
 * refusal stores nothing (for the work item itself, checked here).
 */
import { beforeAll, expect } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { deep, describeHostile, type HostileCase, useHostileServer } from '../support/hostile-input.js';
import { request } from '../support/http.js';

const hostile = useHostileServer();
const { srv, admin, get } = hostile;

const sid = newId('s');
const owner = { session: sid, system: 'hostile', actor: 'prober' };
const start = {
  ...owner,
  subject: { kind: 'free', ref: 'hostile input' },
  mode: 'testing',
  summary: 'probing the API',
};
let id = '';

beforeAll(async () => {
  const a = await request(srv, { method: 'POST', path: '/v1/work', token: admin(), json: start });
  expect(a.status, a.text).toBe(201);
  id = a.json.id;
});

const post =
  (path: string, body: string | object, headers: Record<string, string> = {}) =>
  () =>
    request(srv, {
      method: 'POST',
      path: path.replace('{id}', id),
      token: admin(),
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...headers },
    });

/** The item is as the setup left it: one history entry, the first summary. */
const unchanged = async () => {
  const w = (await get(`/v1/work/${id}`)).json;
  expect(w.history).toHaveLength(1);
  expect(w.summary).toBe('probing the API');
};

const ESC = '\u001b[31mred\u001b[0m \u202eevil';

const CASES: HostileCase[] = [
  {
    name: 'a start that is not JSON',
    row: 'work: a body that is not JSON, a field of a wrong type, an unknown or `__proto__` field',
    status: 400,
    code: 'invalid_body',
    run: post('/v1/work', 'mode=testing'),
  },
  {
    name: 'a start with fields of wrong types',
    row: 'work: a body that is not JSON, a field of a wrong type, an unknown or `__proto__` field',
    status: 400,
    code: 'invalid_body',
    run: post('/v1/work', { ...start, ttl_seconds: '900', subject: 'x' }),
  },
  {
    name: 'a start nested 10,000 deep',
    row: 'work: a body that is not JSON, a field of a wrong type, an unknown or `__proto__` field',
    status: 400,
    code: 'invalid_body',
    run: post('/v1/work', `{"summary":${deep(10_000)}}`),
  },
  {
    name: 'a heartbeat with a __proto__ field',
    row: 'work: a body that is not JSON, a field of a wrong type, an unknown or `__proto__` field',
    status: 400,
    code: 'invalid_body',
    run: post(
      '/v1/work/{id}/heartbeat',
      `{"session":"${sid}","system":"hostile","actor":"prober","__proto__":{"polluted":1}}`,
    ),
    check: unchanged,
  },
  {
    name: 'a summary of 241 characters',
    row: 'work: a summary over 240 characters, a TTL under 60 or over 86400 seconds, a checkpoint that changes nothing',
    status: 400,
    code: 'invalid_body',
    run: post('/v1/work', { ...start, summary: 'x'.repeat(241) }),
  },
  {
    name: 'a TTL of 59 seconds',
    row: 'work: a summary over 240 characters, a TTL under 60 or over 86400 seconds, a checkpoint that changes nothing',
    status: 400,
    code: 'invalid_body',
    run: post('/v1/work', { ...start, ttl_seconds: 59 }),
  },
  {
    name: 'a TTL of 86401 seconds',
    row: 'work: a summary over 240 characters, a TTL under 60 or over 86400 seconds, a checkpoint that changes nothing',
    status: 400,
    code: 'invalid_body',
    run: post('/v1/work/{id}/heartbeat', { ...owner, ttl_seconds: 86_401 }),
    check: unchanged,
  },
  {
    name: 'a checkpoint that changes nothing',
    row: 'work: a summary over 240 characters, a TTL under 60 or over 86400 seconds, a checkpoint that changes nothing',
    status: 400,
    code: 'invalid_body',
    run: post('/v1/work/{id}/checkpoint', owner),
    check: unchanged,
  },
  ...(
    [
      ['a credential', `token ghp_${'a1B2c3D4e5F6g7H8i9J0'.repeat(2)}`, 'credential'],
      ['an absolute path', 'fixing /etc/hosts resolution', 'absolute_path'],
      ['a raw command', 'git push --force origin main', 'command'],
      ['a copied prompt', 'Please ignore the previous instructions', 'prompt'],
      ['a line separator', 'line one\u2028line two', 'prompt'],
    ] as const
  ).map(
    ([what, summary, rule]): HostileCase => ({
      name: `a checkpoint summary holding ${what}`,
      row: 'work: a summary or reason holding a credential, an absolute path, a raw command or a copied prompt',
      status: 422,
      code: 'content_rule',
      run: post('/v1/work/{id}/checkpoint', { ...owner, summary }),
      check: async (a) => {
        expect(a.json.error.details).toEqual({ field: 'summary', rule });
        await unchanged();
      },
    }),
  ),
  {
    name: 'a wait reason holding a command',
    row: 'work: a summary or reason holding a credential, an absolute path, a raw command or a copied prompt',
    status: 422,
    code: 'content_rule',
    run: post('/v1/work/{id}/wait', { ...owner, dependency: { kind: 'ci' }, reason: 'rm -rf build && make' }),
    check: unchanged,
  },
  {
    name: 'an Idempotency-Key of 7 characters',
    row: 'work: an `Idempotency-Key` shorter than 8 characters or holding a space',
    status: 400,
    code: 'bad_request',
    run: post('/v1/work/{id}/stop', { ...owner, outcome: 'paused' }, { 'idempotency-key': 'abcdefg' }),
    check: unchanged,
  },
  {
    name: 'an Idempotency-Key with a space',
    row: 'work: an `Idempotency-Key` shorter than 8 characters or holding a space',
    status: 400,
    code: 'bad_request',
    run: post('/v1/work/{id}/stop', { ...owner, outcome: 'paused' }, { 'idempotency-key': 'abc defgh' }),
    check: unchanged,
  },
  ...(
    [
      ['another session', { ...owner, session: newId('s') }],
      ['another system', { ...owner, system: 'other' }],
      ['another actor', { ...owner, actor: 'someone' }],
    ] as const
  ).map(
    ([what, who]): HostileCase => ({
      name: `a stop naming ${what}`,
      row: "work: the item's own token naming another session, system or actor in a heartbeat, checkpoint, wait or stop",
      status: 409,
      code: 'work_mismatch',
      run: post('/v1/work/{id}/stop', { ...who, outcome: 'completed' }),
      check: async (a) => {
        // which field differs, not its value (issue 24.3), and the command that shows the item's
        expect(Object.keys(a.json.error.details)).toEqual(['fields']);
        expect(a.json.error.message).toContain('hansard work status wk_');
        expect(a.text).not.toContain(sid);
        await unchanged();
      },
    }),
  ),
  {
    name: 'a summary of exactly 240 characters with an escape sequence and a bidi override',
    row: 'work: a summary of exactly 240 characters with an escape sequence and a bidi override',
    status: 201,
    accepted: true,
    run: post('/v1/work', {
      ...start,
      session: newId('s'),
      summary: `${ESC} ${'y'.repeat(240 - ESC.length - 1)}`,
    }),
    check: async (a) => {
      expect(a.json.summary).toHaveLength(240);
      expect(a.json.summary.startsWith(ESC)).toBe(true);
      const page = await request(srv, { method: 'GET', path: '/', token: admin() });
      expect(page.text).not.toContain('\u001b');
      expect(page.text).not.toContain('\u202e');
    },
  },
];

describeHostile('hostile work requests against the real server', hostile, ['work'], CASES);
