/**
 * The route declarations (lib/http/route.ts, lib/http/routes/) as the app serves them, over real HTTP:
 * every declared operation is served and documented with what it declares; the library's validation of
 * path and query answers exactly as the routes always have (path before query, the same codes, messages
 * and details); a body is read by the handler, never refused by the library for its media type; and a
 * declaration that cannot be documented is refused when the module loads.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApp } from '../../lib/http/app.js';
import { defineRoute, json } from '../../lib/http/route.js';
import { ROUTES } from '../../lib/http/routes/index.js';
import { Health } from '../../lib/http/schemas.js';
import { newId } from '../../lib/log/index.js';
import { expectError, request } from '../support/http.js';
import { writeSession } from '../support/segments.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { ingest: ['ingest'], reader: ['read'] } });

// biome-ignore lint/suspicious/noExplicitAny: the test reads the document field by field
type Json = Record<string, any>;

describe('every declared operation', () => {
  it('is served at its method and path, and nothing else is', () => {
    const app = createApp({ ...srv.stores });
    const served = new Set(app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${r.path}`));
    const declared = ROUTES.map((op) => `${op.method.toUpperCase()} ${op.honoPath}`);
    expect(new Set(declared).size).toBe(declared.length);
    expect([...served].sort()).toEqual([...declared].sort());
    expect(new Set(ROUTES.map((op) => op.operationId)).size).toBe(ROUTES.length);
  });

  it('is documented with its id, its scopes as security alternatives, and every error code it declares', async () => {
    const doc = (await request(srv, 'GET', '/v1/openapi.json')).json as Json;
    for (const op of ROUTES) {
      const documented = doc.paths[op.path]?.[op.method] as Json | undefined;
      expect(documented?.operationId, `${op.method} ${op.path}`).toBe(op.operationId);
      expect(documented!['x-scopes'] ?? []).toEqual([...op.scopes]);
      const bearer = (documented!.security as Json[]).flatMap((s) => s.bearer ?? []);
      expect(bearer.sort()).toEqual([...op.scopes].sort());
      const codes = Object.entries(documented!.responses as Json)
        .filter(([status]) => Number(status) >= 400)
        .flatMap(
          ([, r]) =>
            (r as Json).content?.['application/json']?.schema?.allOf?.[1].properties.error.properties.code
              .enum ?? [],
        );
      for (const code of [...op.errors, 'internal']) expect(codes, `${op.operationId}`).toContain(code);
    }
  });
});

describe('the path and query, as the declared schemas judge them', () => {
  it('judges the path first: a bad id with a bad query is invalid_id, naming the id', async () => {
    const a = await request(srv, 'GET', '/v1/sessions/s_bad/replay?format=xml&raw=maybe', {
      token: srv.tokens.reader,
    });
    const err = expectError(srv, a, 400, 'invalid_id');
    expect(err.details).toEqual({ param: 'sid' });
    expect(err.message).toBe('the sid in the path is not valid: a session id is s_ followed by a ULID');
  });

  it('names a missing offset as missing', async () => {
    const seg = writeSession(srv.workDir);
    const a = await request(srv, 'POST', `/v1/sessions/${seg.sid}/writers/${seg.w}/chunks`, {
      token: srv.tokens.ingest,
      body: seg.bytes,
    });
    const err = expectError(srv, a, 400, 'bad_request');
    expect(err.message).toBe('the query parameter offset is required: the byte offset of the chunk');
  });

  it('names a parameter given twice, and one that is not valid, with its name in details', async () => {
    const twice = await request(srv, 'GET', '/v1/sessions?limit=1&limit=2', { token: srv.tokens.reader });
    const e1 = expectError(srv, twice, 400, 'bad_request');
    expect(e1.message).toBe('the query parameter limit is given more than once: give it once');
    expect(e1.details).toEqual({ param: 'limit' });
    const bad = await request(srv, 'GET', '/v1/sessions?limit=0x10', { token: srv.tokens.reader });
    const e2 = expectError(srv, bad, 400, 'bad_request');
    expect(e2.message).toBe(
      'the query parameter limit is not valid: a limit is a whole number from 1 to 200',
    );
    expect(e2.details).toEqual({ param: 'limit' });
  });

  it('asks for the token before judging anything: a bad id without a token is 401', async () => {
    expectError(srv, await request(srv, 'GET', '/v1/sessions/s_bad/replay?format=xml'), 401, 'unauthorized');
  });
});

describe('request bodies', () => {
  it('are read by the handler whatever their media type: JSON sent as text/plain is taken, as before', async () => {
    const a = await request(srv, 'POST', `/v1/sessions/${newId('s')}/status`, {
      token: srv.tenant.admin,
      body: JSON.stringify({ state: 'working', note: 'sent as text' }),
      headers: { 'content-type': 'text/plain' },
    });
    expect(a.status, a.text).toBe(201);
  });

  it('are validated by the verb, whose issues name each problem', async () => {
    const a = await request(srv, 'POST', `/v1/sessions/${newId('s')}/status`, {
      token: srv.tenant.admin,
      json: { state: 'asleep' },
    });
    const err = expectError(srv, a, 400, 'invalid_body');
    expect(err.details.issues).toEqual([{ path: 'state', message: expect.any(String) }]);
  });
});

describe('defineRoute', () => {
  /** A GET route answering `schema` with `status` (200 unless given), declaring `errors`. */
  const route = (schema: z.ZodType, errors: ('not_found' | 'forbidden')[] = [], status: 200 | 404 = 200) =>
    defineRoute({
      route: {
        method: 'get',
        path: '/v1/example',
        operationId: 'example',
        summary: 'an example',
        responses: { [status]: json('ok', schema) },
      },
      auth: 'bearer',
      scopes: ['read'],
      errors,
      handler: () => {
        throw new Error('never called');
      },
    });

  it('refuses an answer whose schema is not a named component', () => {
    expect(() => route(z.object({}))).toThrow(
      'example 200: its schema has no .meta({ id }), so no component',
    );
  });

  it('refuses a status that is both an answer and an error', () => {
    expect(() => route(Health)).not.toThrow();
    expect(() => route(Health, ['not_found'], 404)).toThrow('example: 404 is both an answer and an error');
  });
});
