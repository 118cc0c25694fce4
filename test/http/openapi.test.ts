/**
 * The OpenAPI document (`GET /v1/openapi.json`) and the API reference (`GET /v1/docs`), over real HTTP:
 * the document is valid OpenAPI 3.1 (@readme/openapi-parser); it documents every route the Hono app
 * serves and nothing else; real answers of every operation (successes and errors) match the status, media
 * type, headers and JSON Schema the document gives for them (ajv, draft 2020-12); the reference page shows
 * every operation and schema.
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileErrors, dereference, validate } from '@readme/openapi-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { LocalKeyring } from '../../lib/audit/local-keyring.js';
import { LocalSecretSealer } from '../../lib/deploy/local-sealer.js';
import { createApp } from '../../lib/http/app.js';
import { newId } from '../../lib/log/index.js';
import { DEFAULT_ALERT_CONFIG } from '../../lib/service/alerts/index.js';
import { DEFAULT_SIGN_IN_CONFIG } from '../../lib/service/sign-in/deps.js';
import { type Answer, navigate, type RequestOptions, request } from '../support/http.js';
import { writeSession } from '../support/segments.js';
import { mint, useServer } from '../support/server.js';
import { postChunk, upload } from '../support/stored.js';

// biome-ignore lint/suspicious/noExplicitAny: the test reads the document field by field
type Json = Record<string, any>;

// A signing key, so the export route answers 200 (issue 15.3); a sealer, so the alert routes do (issue 28).
const keysDir = mkdtempSync(join(tmpdir(), 'hansard-openapi-keys-'));
const srv = useServer({
  deps: {
    signer: LocalKeyring.open(keysDir).keyring,
    alerts: { sealer: new LocalSecretSealer(keysDir), config: DEFAULT_ALERT_CONFIG },
    // and one of OIDC client secrets, so the sign-in admin routes do (issue 29)
    signIn: { sealer: new LocalSecretSealer(keysDir), config: DEFAULT_SIGN_IN_CONFIG },
  },
});
/** the document as served */
let doc: Json;
/** the document with every $ref resolved, for ajv */
let resolved: Json;
const ajv = new Ajv2020({ allErrors: true, strict: true });
ajv.addFormat('date-time', {
  type: 'string',
  validate: (s: string) =>
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(s) && !Number.isNaN(Date.parse(s)),
});
// the contract's `z.url()` (an OIDC issuer, issue 29)
ajv.addFormat('uri', { type: 'string', validate: (s: string) => URL.canParse(s) });
const compiled = new Map<string, ValidateFunction>();
/** `${operationId} ${status}` of every answer checked against the document */
const checked = new Set<string>();

beforeAll(async () => {
  const a = await request(srv, 'GET', '/v1/openapi.json');
  expect(a.status).toBe(200);
  doc = a.json;
  resolved = await dereference(structuredClone(doc) as never);
});

/** `/v1/sessions/:sid` as an OpenAPI path template. */
const template = (honoPath: string) => honoPath.replace(/:(\w+)/g, '{$1}');
const mediaBase = (type: string) => type.split(';')[0]!.trim().toLowerCase();

/** Every `METHOD /path` the document has. */
function documented(d: Json): string[] {
  return Object.entries(d.paths as Json).flatMap(([path, item]) =>
    Object.keys(item as Json).map((m) => `${m.toUpperCase()} ${path}`),
  );
}

/**
 * Checks a real answer against what the document says `method path` answers: its status is documented,
 * its media type is one of the documented ones, the documented headers are there, and a JSON body is
 * valid against the documented schema.
 */
function expectDocumented(method: string, path: string, a: Answer): void {
  const op = (resolved.paths as Json)[path]?.[method.toLowerCase()] as Json | undefined;
  expect(op, `${method} ${path} is documented`).toBeDefined();
  const res = (op!.responses as Json)[String(a.status)] as Json | undefined;
  expect(res, `${method} ${path} documents status ${a.status}: ${a.text.slice(0, 200)}`).toBeDefined();
  for (const header of Object.keys(res!.headers ?? {})) {
    expect(a.headers.has(header), `${method} ${path} ${a.status} has header ${header}`).toBe(true);
  }
  const content = res!.content as Json | undefined;
  if (!content) {
    expect(a.bytes.length, `${method} ${path} ${a.status} has no body`).toBe(0);
  } else {
    const type = mediaBase(a.headers.get('content-type') ?? '');
    const key = Object.keys(content).find((k) => mediaBase(k) === type);
    expect(key, `${method} ${path} ${a.status} documents ${type}: ${Object.keys(content)}`).toBeDefined();
    if (type === 'application/json') {
      const id = `${method} ${path} ${a.status}`;
      let check = compiled.get(id);
      if (!check) {
        check = ajv.compile(content[key!].schema);
        compiled.set(id, check);
      }
      const ok = check(JSON.parse(a.text));
      expect(ok ? null : ajv.errorsText(check.errors), `${id}: ${a.text.slice(0, 300)}`).toBeNull();
    }
  }
  checked.add(`${op!.operationId} ${a.status}`);
}

/** A request whose answer must match the document; returns the answer. */
async function call(
  method: string,
  path: string,
  docPath: string,
  opts: Parameters<typeof request>[3] = {},
): Promise<Answer> {
  const a = await request(srv, method, path, { token: srv.admin, ...opts });
  expectDocumented(method, docPath, a);
  return a;
}

/** A request with no token (the board pages take it from a cookie or a form); `request` never follows redirects. */
function raw(method: string, path: string, init: RequestOptions = {}): Promise<Answer> {
  return request(srv, { ...init, method, path });
}

describe('GET /v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, served without a token', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? '' : compileErrors(result)).toBe('');
    expect(result.warnings).toEqual([]);
  });

  it('documents every route the app serves, and only those', () => {
    const app = createApp({ ...srv.stores });
    const served = new Set(
      app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${template(r.path)}`),
    );
    const inDoc = new Set(documented(doc));
    expect(
      [...served].filter((r) => !inDoc.has(r)),
      'served but not documented',
    ).toEqual([]);
    expect(
      [...inDoc].filter((r) => !served.has(r)),
      'documented but not served',
    ).toEqual([]);
    expect(served.size).toBeGreaterThan(20);
  });

  it('names its components: every JSON body and answer is a $ref, every error the ErrorBody', () => {
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        const bodies = [
          ...Object.values((op as Json).requestBody?.content ?? {}),
          ...Object.values((op as Json).responses as Json).flatMap((r) =>
            Object.values((r as Json).content ?? {}),
          ),
        ];
        for (const [status, r] of Object.entries((op as Json).responses as Json)) {
          const json = (r as Json).content?.['application/json']?.schema as Json | undefined;
          if (Number(status) >= 400 && json) {
            expect(json.allOf?.[0]?.$ref, `${method} ${path} ${status}`).toBe(
              '#/components/schemas/ErrorBody',
            );
          }
        }
        for (const b of bodies) {
          const schema = (b as Json).schema as Json;
          if (schema.$ref) expect(doc.components.schemas[schema.$ref.split('/').pop()]).toBeDefined();
          else expect(schema.allOf ?? schema.contentMediaType, `${method} ${path}`).toBeDefined();
        }
        // Every operation answers 500 as an ErrorBody, and each /v1 operation behind a token 401.
        expect((op as Json).responses['500']).toBeDefined();
        if (path.startsWith('/v1/') && ((op as Json).security ?? []).length > 0) {
          expect((op as Json).responses['401'], `${method} ${path}`).toBeDefined();
        }
      }
    }
    const codes = doc.components.schemas.ErrorBody.properties.error.properties.code.enum as string[];
    expect(codes).toContain('offset_mismatch');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('describes query parameters from the schemas the routes validate with', () => {
    const params = (path: string, method = 'get') =>
      Object.fromEntries(
        ((doc.paths[path][method].parameters ?? []) as Json[]).map((p) => [p.name, p]),
      ) as Record<string, Json>;
    const chunk = params('/v1/sessions/{sid}/writers/{w}/chunks', 'post');
    expect(chunk.offset).toMatchObject({ in: 'query', required: true, schema: { type: 'string' } });
    expect(chunk.sid).toMatchObject({ in: 'path', required: true });
    expect(chunk.sid!.schema.pattern).toBe('^s_[0-9A-HJKMNP-TV-Z]{26}$');
    const list = params('/v1/sessions');
    // A query value is a string: the schema gives its form, the description its range and default.
    expect(list.limit).toMatchObject({ required: false, schema: { type: 'string', pattern: '^\\d{1,3}$' } });
    expect(list.limit!.description).toMatch(/1 to 200/);
    expect(list.cursor).toMatchObject({ required: false });
    const replay = params('/v1/sessions/{sid}/replay');
    expect(replay.format!.schema).toMatchObject({ enum: ['ndjson', 'text'], default: 'ndjson' });
    expect(replay.raw!.schema.enum).toEqual(['0', '1', 'true', 'false']);
  });
});

describe('real answers match the document', () => {
  it('for every operation: successes and errors', async () => {
    const reader = await mint(srv, 'local', ['read']);
    const nobody = { token: null };

    await call('GET', '/healthz', '/healthz', nobody);
    await call('GET', '/v1/openapi.json', '/v1/openapi.json', nobody);
    await call('GET', '/v1/docs', '/v1/docs', nobody);
    await call('GET', '/v1/keys', '/v1/keys', nobody);

    // ingest: 201, a retry (200), and the refusals
    const seg = writeSession(srv.workDir);
    const chunks = '/v1/sessions/{sid}/writers/{w}/chunks';
    const chunk = (offset: number | null, body: string | Buffer, token: string | null = srv.admin) =>
      postChunk(srv, token, seg.sid, seg.w, offset, body);
    expectDocumented('POST', chunks, await chunk(0, seg.bytes));
    expectDocumented('POST', chunks, await chunk(0, seg.bytes));
    expectDocumented('POST', chunks, await chunk(1, seg.bytes)); // 409 offset_mismatch
    expectDocumented('POST', chunks, await chunk(null, seg.bytes)); // 400 bad_request
    expectDocumented('POST', chunks, await chunk(seg.bytes.length, 'no newline')); // 400 incomplete_line
    expectDocumented('POST', chunks, await chunk(seg.bytes.length, seg.bytes, reader)); // 403
    expectDocumented('POST', chunks, await chunk(seg.bytes.length, seg.bytes, null)); // 401
    const other = writeSession(srv.workDir, { agent: 'second' });
    await upload(srv, srv.admin, other);

    const { sid, w } = seg;
    await call('GET', `/v1/sessions/${sid}/writers/${w}`, '/v1/sessions/{sid}/writers/{w}');
    await call('GET', `/v1/sessions/${sid}/writers/${newId('w')}`, '/v1/sessions/{sid}/writers/{w}'); // 404
    await call('GET', `/v1/sessions/${sid}/writers/${w}/segment`, '/v1/sessions/{sid}/writers/{w}/segment');
    const listing = '/v1/sessions/{sid}/writers/{w}/chunks';
    await call('GET', `/v1/sessions/${sid}/writers/${w}/chunks?limit=1`, listing);
    await call('GET', `/v1/sessions/${sid}/writers/${w}/chunks?limit=0`, listing); // 400
    await call('GET', `/v1/sessions/${sid}/writers/${newId('w')}/chunks`, listing); // 404
    await call('GET', '/v1/sessions?limit=1', '/v1/sessions');
    await call('GET', '/v1/sessions?limit=0', '/v1/sessions'); // 400 bad_request
    await call('GET', '/v1/sessions?cursor=nonsense', '/v1/sessions'); // 400 invalid_cursor
    await call('GET', '/v1/sessions', '/v1/sessions', nobody); // 401
    await call('GET', `/v1/sessions/${sid}`, '/v1/sessions/{sid}');
    await call('GET', '/v1/sessions/not-an-id', '/v1/sessions/{sid}'); // 400 invalid_id
    for (const q of ['', '?format=text', '?raw=1', '?format=xml']) {
      await call('GET', `/v1/sessions/${sid}/replay${q}`, '/v1/sessions/{sid}/replay');
    }
    await call('GET', `/v1/sessions/${sid}/verify`, '/v1/sessions/{sid}/verify');
    await call('GET', `/v1/sessions/${newId('s')}/verify`, '/v1/sessions/{sid}/verify'); // 404
    await call('GET', `/v1/sessions/${sid}/inspect`, '/v1/sessions/{sid}/inspect');
    await call('GET', `/v1/sessions/${sid}/attribution`, '/v1/sessions/{sid}/attribution');
    await call('GET', `/v1/sessions/${sid}/export`, '/v1/sessions/{sid}/export');
    await call('GET', `/v1/sessions/${newId('s')}/export`, '/v1/sessions/{sid}/export'); // 404
    // an export digest, then the bundle up to it (issue 15.3); a digest not stored, a malformed head
    await call('POST', `/v1/sessions/${sid}/digests`, '/v1/sessions/{sid}/digests'); // 201
    await call('POST', `/v1/sessions/${newId('s')}/digests`, '/v1/sessions/{sid}/digests'); // 404
    await call('GET', `/v1/sessions/${sid}/export?head=1`, '/v1/sessions/{sid}/export');
    await call('GET', `/v1/sessions/${sid}/export?head=999`, '/v1/sessions/{sid}/export'); // 404
    await call('GET', `/v1/sessions/${sid}/export?head=x1`, '/v1/sessions/{sid}/export'); // 400

    // status
    const status = '/v1/sessions/{sid}/status';
    await call('GET', `/v1/sessions/${sid}/status`, status); // 404: nothing reported yet
    const report = {
      state: 'needs_review',
      note: 'restarted the payments worker',
      events: [{ kind: 'evidence', evidence: [{ type: 'command', ref: 'toolu_01', result: 'exit:0' }] }],
    };
    await call('POST', `/v1/sessions/${sid}/status`, status, { json: report });
    await call('POST', `/v1/sessions/${sid}/status`, status, { json: { state: 'asleep' } }); // 400
    await call('POST', `/v1/sessions/${sid}/status`, status, { json: report, token: reader }); // 403
    await call('GET', `/v1/sessions/${sid}/status`, status);
    await call('GET', '/v1/board', '/v1/board');
    await call('GET', '/v1/board', '/v1/board', nobody); // 401
    const overview = '/v1/board/overview';
    const filtered = `${overview}?state=needs_review&q=payments`;
    const o = await call('GET', filtered, overview);
    expect(o.json.rows.map((r: { sid: string }) => r.sid)).toEqual([sid]);
    await call('GET', filtered, overview, { headers: { 'if-none-match': o.headers.get('etag')! } }); // 304
    await call('GET', `${overview}?limit=0`, overview); // 400
    await call('GET', overview, overview, nobody); // 401

    // work leases
    const owner = { session: sid, system: 'openapi', actor: 'tester' };
    const workStart = {
      ...owner,
      subject: { kind: 'session', ref: sid },
      mode: 'testing',
      summary: 'the API document',
    };
    const headers = { 'idempotency-key': 'openapi-start-1' };
    const started = await call('POST', '/v1/work', '/v1/work', { json: workStart, headers }); // 201
    await call('POST', '/v1/work', '/v1/work', { json: workStart, headers }); // 200: the same key and body
    await call('POST', '/v1/work', '/v1/work', { json: { ...workStart, summary: 'npm test -- --run' } }); // 422
    await call('POST', '/v1/work', '/v1/work', { json: { ...workStart, summary: 'x' }, headers }); // 409 mismatch
    const wid = started.json.id as string;
    const item = (op: string) => `/v1/work/{id}/${op}`;
    await call('GET', '/v1/work', '/v1/work');
    await call('GET', `/v1/work/${wid}`, '/v1/work/{id}');
    await call('GET', `/v1/work/wk_${newId('e').slice(2)}`, '/v1/work/{id}'); // 404
    await call('POST', `/v1/work/${wid}/heartbeat`, item('heartbeat'), { json: owner });
    await call('POST', `/v1/work/${wid}/heartbeat`, item('heartbeat'), {
      json: { ...owner, actor: 'other' },
    }); // 409 work_mismatch
    await call('POST', `/v1/work/${wid}/heartbeat`, item('heartbeat'), { json: owner, token: reader }); // 403
    await call('POST', `/v1/work/${wid}/checkpoint`, item('checkpoint'), {
      json: { ...owner, mode: 'reviewing' },
    });
    await call('POST', `/v1/work/${wid}/wait`, item('wait'), {
      json: { ...owner, dependency: { kind: 'ci' }, reason: 'the pipeline has not run yet' },
    });
    await call('POST', `/v1/work/${wid}/resume`, item('resume'), {
      json: {
        ...owner,
        op: 'checkpoint',
        idempotency_key: 'openapi-cp-1',
        body: { summary: 'the reference page' },
      },
    });
    await call('POST', `/v1/work/${wid}/stop`, item('stop'), { json: { ...owner, outcome: 'completed' } });
    await call('POST', `/v1/work/${wid}/stop`, item('stop'), { json: { ...owner, outcome: 'completed' } }); // 409

    // tokens
    const created = await call('POST', '/v1/tokens', '/v1/tokens', {
      json: { scopes: ['read'], label: 'openapi test', ttl_seconds: 3600 },
    });
    await call('POST', '/v1/tokens', '/v1/tokens', { json: { scopes: ['root'] } }); // 400 invalid_body
    await call('POST', '/v1/tokens', '/v1/tokens', { json: { scopes: ['read'] }, token: reader }); // 403
    await call('GET', '/v1/tokens', '/v1/tokens');
    await call('GET', '/v1/tokens/self', '/v1/tokens/self', { token: reader });
    await call('GET', '/v1/tokens/self', '/v1/tokens/self', { token: null }); // 401
    await call('DELETE', `/v1/tokens/${created.json.id}`, '/v1/tokens/{id}');
    await call('DELETE', `/v1/tokens/${created.json.id}x`, '/v1/tokens/{id}'); // 400 invalid_id
    await call('DELETE', `/v1/tokens/${newId('e').replace(/^e_/, 'tok_')}`, '/v1/tokens/{id}'); // 404
    await call('POST', `/v1/sessions/${sid}/tokens`, '/v1/sessions/{sid}/tokens', { body: '' });

    // usage (issue 27)
    const usage = '/v1/sessions/{sid}/usage';
    await call('GET', `/v1/sessions/${sid}/usage`, usage);
    await call('GET', `/v1/sessions/${sid}/usage?by=turn`, usage);
    await call('GET', `/v1/sessions/${sid}/usage?by=model`, usage);
    await call('GET', `/v1/sessions/${sid}/usage?by=week`, usage); // 400
    await call('GET', `/v1/sessions/${newId('s')}/usage`, usage); // 404
    await call('GET', '/v1/usage?group_by=model', '/v1/usage');
    await call('GET', '/v1/usage?from=2020-01-01&to=2026-01-01', '/v1/usage'); // 400: over 366 days
    await call('POST', `/v1/usage/recompute?sid=${sid}`, '/v1/usage/recompute');
    await call('POST', '/v1/usage/recompute', '/v1/usage/recompute', { token: reader }); // 403

    // alerts (issue 28): a public address given as one, so that nothing resolves a name
    const target = { url: 'https://93.184.215.14/hook', events: ['session.blocked'], label: 'openapi' };
    const added = await call('POST', '/v1/alerts', '/v1/alerts', { json: target });
    await call('POST', '/v1/alerts', '/v1/alerts', { json: { ...target, events: ['nope'] } }); // 400
    await call('POST', '/v1/alerts', '/v1/alerts', { json: { url: 'http://127.0.0.1/' } }); // 400 invalid_target
    await call('GET', '/v1/alerts', '/v1/alerts');
    const one = '/v1/alerts/{id}';
    const id = added.json.id as string;
    await call('POST', `/v1/alerts/${id}/rotate`, `${one}/rotate`, { json: { grace_seconds: 60 } });
    await call('POST', `/v1/alerts/${id}/rotate`, `${one}/rotate`, { json: { grace_seconds: -1 } }); // 400
    await call('POST', `/v1/alerts/${id}/test`, `${one}/test`);
    await call('GET', `/v1/alerts/${id}/deliveries?limit=5`, `${one}/deliveries`);
    await call('GET', `/v1/alerts/${id}/deliveries?limit=0`, `${one}/deliveries`); // 400
    await call('GET', `/v1/sessions/${sid}/alerts`, '/v1/sessions/{sid}/alerts');
    await call('GET', `/v1/sessions/${sid}/alerts`, '/v1/sessions/{sid}/alerts', { token: reader });
    await call('DELETE', `/v1/alerts/${id}`, one);
    await call('DELETE', `/v1/alerts/${id}`, one); // 404
    await call('DELETE', '/v1/alerts/at_nope', one); // 400 invalid_id
    await call('GET', '/v1/alerts', '/v1/alerts', { token: reader }); // 403

    // team sign-in's admin routes (issue 29); check=0: no provider is asked
    const oidc = '/v1/tenants/{tenant}/oidc';
    const settings = { issuer: 'http://127.0.0.1:9/openapi', client_id: 'c', client_secret: 's' };
    await call('GET', '/v1/tenants/local/oidc', oidc); // 404: none yet
    await call('PUT', '/v1/tenants/local/oidc?check=0', oidc, { json: settings });
    await call('PUT', '/v1/tenants/local/oidc?check=0', oidc, { json: { ...settings, issuer: 'ftp://x' } }); // 400
    await call('PUT', '/v1/tenants/local/oidc?check=maybe', oidc, { json: settings }); // 400 bad_request
    await call('GET', '/v1/tenants/local/oidc', oidc);
    await call('GET', '/v1/tenants/Not-A-Tenant/oidc', oidc); // 400 invalid_id
    await call('GET', '/v1/tenants/local/oidc', oidc, { token: reader }); // 403
    await call('DELETE', '/v1/tenants/local/oidc', oidc);
    await call('DELETE', '/v1/tenants/local/oidc', oidc); // 404
    const person = '/v1/people/{email}';
    await call('PUT', '/v1/people/ann%40example.com', person, { json: { link: ['ann'], role: 'member' } });
    await call('PUT', '/v1/people/ann%40example.com', person, { json: {} }); // 400
    await call('GET', '/v1/people/ann%40example.com', person);
    await call('GET', '/v1/people/nobody%40example.com', person); // 404
    await call('GET', '/v1/people?limit=1', '/v1/people');
    await call('GET', '/v1/people?cursor=forged', '/v1/people'); // 400 invalid_cursor
    await call('GET', '/v1/audit-log?limit=2', '/v1/audit-log');
    await call('GET', '/v1/audit-log', '/v1/audit-log', { token: reader }); // 403

    // the board pages
    const origin = { origin: srv.url };
    for (const [method, path, docPath, init] of [
      ['GET', '/login', '/login', {}],
      ['GET', '/login/oidc', '/login/oidc', {}], // 400: no tenant named
      ['GET', '/login/oidc?tenant=acme', '/login/oidc', {}],
      ['GET', '/login/oidc/callback?code=x&state=y', '/login/oidc/callback', {}], // no flow under way
      ['GET', '/', '/', {}], // 302 to /login
      ['GET', `/?token=${srv.admin}`, '/', {}], // 200: fetch is no typed navigation, so it asks to confirm
      ['GET', `/?token=hns_${'x'.repeat(43)}`, '/', {}], // 401
      ['GET', `/sessions/${sid}`, '/sessions/{sid}', {}], // 302 to /login
      ['GET', `/sessions/${sid}`, '/sessions/{sid}', { headers: { authorization: `Bearer ${srv.admin}` } }],
      [
        'GET',
        `/sessions/${newId('s')}`,
        '/sessions/{sid}',
        { headers: { cookie: `hansard_board=${srv.admin}` } },
      ],
      [
        'POST',
        '/login',
        '/login',
        {
          headers: { ...origin, 'content-type': 'application/x-www-form-urlencoded' },
          body: `token=${srv.admin}`,
        },
      ],
      [
        'POST',
        '/login',
        '/login',
        { headers: { ...origin, 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=nope' },
      ],
      ['POST', '/logout', '/logout', { headers: origin }],
      [
        'POST',
        '/logout',
        '/logout',
        {
          headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
          body: 'x=1',
        },
      ], // 403
    ] as const) {
      expectDocumented(method, docPath, await raw(method, path, init as RequestOptions));
    }
    // 303, signed in: the link as a browser sends it when the user opens it
    expectDocumented('GET', '/', await navigate(srv, `/?token=${srv.admin}`));

    // the overview's views, live updates and scripts (issue 14)
    const signedIn = { headers: { cookie: `hansard_board=${srv.admin}` } };
    const frag = await raw('GET', '/board/fragment', signedIn);
    for (const [path, docPath, init] of [
      ['/?state=working&page=2', '/', signedIn],
      ['/?page=0', '/', signedIn], // 400
      ['/people/priya', '/people/{user_id}', signedIn],
      ['/people/priya?limit=0', '/people/{user_id}', signedIn], // 400
      ['/agents/claude-code', '/agents/{agent}', {}], // 302 to /login
      ['/agents/claude-code', '/agents/{agent}', signedIn],
      ['/board/fragment', '/board/fragment', signedIn],
      [
        '/board/fragment',
        '/board/fragment',
        { headers: { ...signedIn.headers, 'if-none-match': frag.headers.get('etag')! } },
      ], // 304
      ['/board/fragment?state=asleep', '/board/fragment', signedIn], // 400
      ['/board/fragment', '/board/fragment', {}], // 401
      ['/board/events', '/board/events', {}], // 401
      ['/assets/htmx.min.js', '/assets/{name}', {}],
      ['/assets/nothing.js', '/assets/{name}', {}], // 404
    ] as const) {
      expectDocumented('GET', docPath, await raw('GET', path, init as RequestOptions));
    }
    // the alerts page and its "Send a test" form (issue 28 item 5)
    const pageTarget = await call('POST', '/v1/alerts', '/v1/alerts', {
      json: { url: 'https://93.184.215.14/page-hook', label: 'openapi page' },
    });
    const viewer = await mint(srv, 'local', ['board']);
    const alertsPage = await raw('GET', '/alerts', signedIn);
    expectDocumented('GET', '/alerts', alertsPage);
    expectDocumented('GET', '/alerts', await raw('GET', '/alerts', {})); // 302 to /login
    expectDocumented(
      'GET',
      '/alerts',
      await raw('GET', '/alerts', { headers: { cookie: `hansard_board=${viewer}` } }),
    ); // 403
    const csrf = /name="csrf" value="([^"]+)"/.exec(alertsPage.text)![1]!;
    const testForm = (body: string, from: string) => ({
      headers: { ...signedIn.headers, origin: from, 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    const testPath = '/alerts/{id}/test';
    const pageId = pageTarget.json.id as string;
    for (const [path, init] of [
      [`/alerts/${pageId}/test`, testForm(`csrf=${csrf}`, srv.url)], // 303
      [`/alerts/${pageId}/test`, testForm('csrf=nope', srv.url)], // 403, a page
      [`/alerts/${pageId}/test`, testForm(`csrf=${csrf}`, 'https://evil.example')], // 403, a page
      ['/alerts/at_nope/test', testForm(`csrf=${csrf}`, srv.url)], // 400
      [
        `/alerts/${pageId}/test`,
        { headers: { origin: srv.url, 'content-type': 'application/x-www-form-urlencoded' }, body: 'csrf=x' },
      ], // not signed in: 302 to /login
    ] as const) {
      expectDocumented('POST', testPath, await raw('POST', path, init as RequestOptions));
    }

    // the audit list and the tokens page with its "Revoke" form (issue 29 item 4)
    const viewerCookie = { headers: { cookie: `hansard_board=${viewer}` } };
    for (const [path, init] of [
      ['/audit', signedIn], // 200
      ['/audit?cursor=nope', signedIn], // 400
      ['/audit', viewerCookie], // 403
      ['/audit', {}], // 302 to /login
    ] as const) {
      expectDocumented('GET', '/audit', await raw('GET', path, init as RequestOptions));
    }
    const tokensPage = await raw('GET', '/tokens', signedIn);
    expectDocumented('GET', '/tokens', tokensPage);
    expectDocumented('GET', '/tokens', await raw('GET', '/tokens', viewerCookie)); // 403
    expectDocumented('GET', '/tokens', await raw('GET', '/tokens', {})); // 302 to /login
    const tokensCsrf = /name="csrf" value="([^"]+)"/.exec(tokensPage.text)![1]!;
    const doomed = await raw('GET', '/v1/tokens/self', {
      headers: { authorization: `Bearer ${await mint(srv, 'local', ['read'])}` },
    });
    const doomedId = doomed.json.id as string;
    const revokeForm = (body: string, from: string) => ({
      headers: { ...signedIn.headers, origin: from, 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    for (const [path, init] of [
      [`/tokens/${doomedId}/revoke`, revokeForm('csrf=nope', srv.url)], // 403, a page
      [`/tokens/${doomedId}/revoke`, revokeForm(`csrf=${tokensCsrf}`, 'https://evil.example')], // 403
      [`/tokens/${doomedId}/revoke`, revokeForm(`csrf=${tokensCsrf}`, srv.url)], // 303
      ['/tokens/tok_nope/revoke', revokeForm(`csrf=${tokensCsrf}`, srv.url)], // 400
      [
        `/tokens/${doomedId}/revoke`,
        { headers: { origin: srv.url, 'content-type': 'application/x-www-form-urlencoded' }, body: 'csrf=x' },
      ], // not signed in: 302 to /login
    ] as const) {
      expectDocumented('POST', '/tokens/{id}/revoke', await raw('POST', path, init as RequestOptions));
    }

    // search (issue 30): hits, a bad query, a bad limit, a token without read; the index's status; a
    // reindex queued (202); the board's page with hits, with a bad query (400) and signed out (302)
    await srv.indexNow();
    await call('GET', '/v1/search?q=payments', '/v1/search');
    await call('GET', '/v1/search?q=%22unclosed', '/v1/search'); // 400 bad_query
    await call('GET', '/v1/search?q=payments&limit=0', '/v1/search'); // 400 bad_request
    await call('GET', '/v1/search?q=payments', '/v1/search', { token: await mint(srv, 'local', ['ingest']) });
    await call('GET', '/v1/search/status', '/v1/search/status');
    await call('POST', '/v1/search/reindex', '/v1/search/reindex', { json: { sid } }); // 202
    await call('POST', '/v1/search/reindex', '/v1/search/reindex', { json: { sid: newId('s') } }); // 404
    for (const path of ['/search?q=payments', '/search?q=%22unclosed', '/search']) {
      expectDocumented('GET', '/search', await raw('GET', path, signedIn));
    }
    expectDocumented('GET', '/search', await raw('GET', '/search?q=payments')); // 302 to /login

    // the stream: its status and type, read no further
    const ac = new AbortController();
    const stream = await fetch(`${srv.url}/board/events`, { ...signedIn, signal: ac.signal });
    expectDocumented('GET', '/board/events', {
      status: stream.status,
      headers: stream.headers,
      bytes: Buffer.from('x'),
      text: '',
      json: null,
    });
    ac.abort();

    // Every operation had at least one real answer checked.
    const exercised = new Set([...checked].map((c) => c.split(' ')[0]));
    const operations = Object.values(doc.paths as Json).flatMap((item) =>
      Object.values(item as Json).map((op) => (op as Json).operationId as string),
    );
    expect(operations.filter((id) => !exercised.has(id))).toEqual([]);
    // and the statuses above, among them each kind of error
    for (const want of [
      'postChunk 201',
      'postChunk 200',
      'postChunk 409',
      'postChunk 400',
      'postChunk 401',
      'postChunk 403',
      'getWriter 404',
      'listChunks 200',
      'listChunks 400',
      'listChunks 404',
      'listSessions 400',
      'getSession 400',
      'replay 400',
      'reportStatus 201',
      'reportStatus 400',
      'getOverview 200',
      'getOverview 304',
      'getOverview 400',
      'boardPage 400',
      'personPage 200',
      'agentPage 302',
      'boardFragment 304',
      'boardFragment 401',
      'boardEvents 200',
      'boardAsset 200',
      'boardAsset 404',
      'workStart 201',
      'workStart 200',
      'workStart 409',
      'workStart 422',
      'workGet 404',
      'workHeartbeat 403',
      'workHeartbeat 409',
      'workStop 409',
      'createToken 201',
      'getTokenSelf 200',
      'getTokenSelf 401',
      'revokeToken 204',
      'revokeToken 404',
      'login 303',
      'logout 403',
      'boardPage 302',
      'boardPage 303',
      'boardPage 401',
      'sessionPage 404',
      'search 200',
      'search 400',
      'search 403',
      'reindexSearch 202',
      'reindexSearch 404',
      'searchPage 200',
      'searchPage 400',
      'searchPage 302',
    ]) {
      expect(checked, want).toContain(want);
    }
  });
});

describe('GET /v1/docs', () => {
  it('renders every operation and schema of the document, with no script and a strict CSP', async () => {
    const a = await request(srv, 'GET', '/v1/docs');
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toContain('text/html');
    expect(a.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(a.text).not.toContain('<script');
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        const at = a.text.indexOf(`id="op-${(op as Json).operationId}"`);
        expect(at, `${method} ${path}`).toBeGreaterThan(-1);
        // hono/jsx escapes attributes: `{` and `}` stay as they are
        expect(a.text.slice(at, at + 300)).toContain(`data-path="${path}" data-method="${method}"`);
      }
    }
    for (const name of Object.keys(doc.components.schemas)) expect(a.text).toContain(`id="schema-${name}"`);
    expect(a.text).toContain('href="/v1/openapi.json"');
  });

  it('is linked from the board pages', async () => {
    const a = await request(srv, 'GET', '/login');
    expect(a.text).toContain('href="/v1/docs"');
  });
});
