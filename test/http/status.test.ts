/**
 * Status reports over real HTTP (seed 000, DESIGN §4 and §7 limits): a report is stored and shown on the
 * board; a report over a limit is refused naming the field, and nothing of it is stored.
 */
import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { type Answer, expectError, request } from '../support/http.js';
import { mint, useServer } from '../support/server.js';

const srv = useServer({ tokens: { reporter: ['report'], reader: ['read'], board: ['board'] } });
const { tokens } = srv;

const post = (sid: string, json: unknown, token: string | null = tokens.reporter) =>
  request(srv, 'POST', `/v1/sessions/${sid}/status`, { token, json });
const getStatus = (sid: string) =>
  request(srv, 'GET', `/v1/sessions/${sid}/status`, { token: tokens.reader });

const evidence = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ type: 'test', ref: `test/unit-${i}.test.ts`, result: 'passed' }));

describe('POST /v1/sessions/{sid}/status', () => {
  const sid = newId('s');
  let stored: Answer;

  it('stores a report from a report token with 201', async () => {
    const report = {
      state: 'working',
      note: 'wiring the chunk route; tests next',
      events: [
        { kind: 'plan', evidence: [] },
        { kind: 'evidence', evidence: [{ type: 'command', ref: 'npm test', result: 'exit:0' }] },
      ],
    };
    const a = await post(sid, report);
    expect(a.status, a.text).toBe(201);
    expect(a.json).toMatchObject({ sid, ...report });
    expect(Date.parse(a.json.reported_at)).not.toBeNaN();
    stored = await getStatus(sid);
    expect(stored.status).toBe(200);
    // The answer to a report does not read the transcript; a read checks the claims (no segments: none found).
    expect(a.json.events[1].evidence[0].check).toMatchObject({
      verdict: 'unchecked',
      reason: /when the status is read/,
    });
    expect(stored.json.events[1].evidence[0].check).toMatchObject({
      verdict: 'unsupported',
      reason: 'no observed action matches "npm test"',
    });
    const withoutChecks = (j: {
      events: { evidence: { check?: unknown }[] }[];
      evidence?: unknown;
      history?: unknown;
    }) =>
      JSON.stringify({
        ...j,
        evidence: null,
        history: null,
        events: j.events.map((e) => ({ ...e, evidence: e.evidence.map(({ check: _, ...i }) => i) })),
      });
    expect(withoutChecks(stored.json)).toEqual(withoutChecks(a.json));
  });

  it('shows the report on the board (GET /v1/board with a board token)', async () => {
    const a = await request(srv, 'GET', '/v1/board', { token: tokens.board });
    expect(a.status).toBe(200);
    expect(a.json.tenant).toBe('local');
    const row = a.json.sessions.find((s: { sid: string }) => s.sid === sid);
    expect(row).toMatchObject({ sid, state: 'working', note: 'wiring the chunk route; tests next' });
  });

  /** A refused report: the error, the field named in `details.issues`, and the stored status unchanged. */
  async function refused(body: unknown, field: string | null, code = 'invalid_body') {
    const a =
      typeof body === 'string'
        ? await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
            token: tokens.reporter,
            body,
            headers: { 'content-type': 'application/json' },
          })
        : await post(sid, body);
    const err = expectError(srv, a, 400, code);
    if (field !== null) {
      const issues = err.details.issues as { path: string; message: string }[];
      expect(issues.map((i) => i.path)).toContain(field);
      for (const i of issues) expect(i.message.length).toBeGreaterThan(0);
    }
    const after = await getStatus(sid);
    expect(after.text).toBe(stored.text);
    return err;
  }

  it('refuses a note over 240 characters, naming the field', async () => {
    await refused({ state: 'working', note: 'n'.repeat(241) }, 'note');
    // 240 is allowed
    const ok = await post(newId('s'), { state: 'working', note: 'n'.repeat(240) });
    expect(ok.status).toBe(201);
  });

  it('refuses a note of more than one line', async () => {
    await refused({ state: 'working', note: 'one\ntwo' }, 'note');
    // Every line terminator, not only \n: a line or paragraph separator splits the board's row too.
    await refused({ state: 'working', note: 'one\u2028two' }, 'note');
    await refused({ state: 'working', note: 'one\u2029two' }, 'note');
    await refused({ state: 'working', note: 'one\rtwo' }, 'note');
    const ref = [
      { kind: 'evidence', evidence: [{ type: 'test', ref: 'unit\u2028tests', result: 'passed' }] },
    ];
    await refused({ state: 'working', events: ref }, 'events.0.evidence.0.ref');
  });

  it('refuses an invalid state', async () => {
    await refused({ state: 'finished', note: 'x' }, 'state');
    await refused({ note: 'no state' }, 'state');
  });

  it('refuses five events', async () => {
    const events = Array.from({ length: 5 }, () => ({ kind: 'plan', evidence: [] }));
    await refused({ state: 'working', note: 'x', events }, 'events');
  });

  it('refuses five evidence items in one event', async () => {
    await refused(
      { state: 'working', events: [{ kind: 'evidence', evidence: evidence(5) }] },
      'events.0.evidence',
    );
  });

  it('refuses an evidence ref over 160 characters', async () => {
    const ev = [{ type: 'file', ref: `src/${'a'.repeat(157)}`, result: 'modified' }];
    expect(ev[0]!.ref).toHaveLength(161);
    await refused(
      { state: 'working', events: [{ kind: 'evidence', evidence: ev }] },
      'events.0.evidence.0.ref',
    );
  });

  it('refuses an absolute path as a file reference', async () => {
    const ev = [{ type: 'file', ref: '/etc/passwd', result: 'modified' }];
    await refused(
      { state: 'working', events: [{ kind: 'evidence', evidence: ev }] },
      'events.0.evidence.0.ref',
    );
  });

  it('refuses unknown fields', async () => {
    await refused({ state: 'working', note: 'x', extra: true }, '');
  });

  it('refuses a body that is not JSON, or empty, with 400', async () => {
    await refused('{"state": "working", ', null, 'invalid_body');
    await refused('state=working', null, 'invalid_body');
    await refused('', null, 'empty_body');
    await refused('[1,2]', null, 'invalid_body');
  });

  it('refuses a read-only token with 403 and no token with 401', async () => {
    const err = expectError(
      srv,
      await post(sid, { state: 'done', note: 'x' }, tokens.reader),
      403,
      'forbidden',
    );
    expect(err.details.required).toEqual(['report']);
    expectError(srv, await post(sid, { state: 'done', note: 'x' }, tokens.board), 403, 'forbidden');
    expectError(srv, await post(sid, { state: 'done', note: 'x' }, null), 401, 'unauthorized');
    expect((await getStatus(sid)).text).toBe(stored.text);
  });

  it('refuses an invalid session id with 400', async () => {
    const err = expectError(srv, await post('s_bad', { state: 'done' }), 400, 'invalid_id');
    expect(err.details).toEqual({ param: 'sid' });
  });

  it('replaces the previous report with the next one', async () => {
    const a = await post(sid, { state: 'needs_review', note: 'ready for review' });
    expect(a.status).toBe(201);
    const b = await getStatus(sid);
    expect(b.json).toMatchObject({ sid, state: 'needs_review', note: 'ready for review', events: [] });
    const boardNow = await request(srv, 'GET', '/v1/board', { token: tokens.board });
    const row = boardNow.json.sessions.find((s: { sid: string }) => s.sid === sid);
    expect(row).toMatchObject({ state: 'needs_review', note: 'ready for review' });
  });
});

describe('GET /v1/sessions/{sid}/status', () => {
  it('answers 404 when nothing was reported', async () => {
    expectError(srv, await getStatus(newId('s')), 404, 'not_found');
  });
});

describe('GET /v1/board', () => {
  it('refuses an ingest-only token with 403 and no token with 401', async () => {
    const ingest = await mint(srv, 'local', ['ingest']);
    expectError(srv, await request(srv, 'GET', '/v1/board', { token: ingest }), 403, 'forbidden');
    expectError(srv, await request(srv, 'GET', '/v1/board'), 401, 'unauthorized');
  });
});
