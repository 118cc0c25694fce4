/**
 * Tenant isolation and authorization over every route of the app (STYLE §9, after unkey's common tests).
 * One table says how to call each route; a route the app serves without a row here fails the first test.
 * How each route authenticates and which scopes it takes come from its declaration (lib/http/routes/),
 * so (b) proves that what a route declares is what its verb enforces.
 *
 * Three tenants: A holds the data under attack, B is an ordinary neighbour with data of its own, and C
 * probes A's ids with an all-scopes token. For every route:
 *  (a) C on A's ids answers exactly what C gets for fresh random ids: same status, same bytes (for a
 *      2xx that creates something in C's own tenant, the same bytes once the ids C sent and the values
 *      minted per request — secret, token id, timestamps — are masked);
 *  (b) a token of each single scope the route does not allow gets 403 `forbidden` (the HTML board pages
 *      send such a browser to sign in: 302 to /login), and each allowed scope gets neither;
 *  (c) no token: 401 `unauthorized` on the API, 302 to /login on the board pages;
 *  (d) nothing B or C is answered names A's sessions, writers, tokens, token secrets or hashes;
 *  (e) A's session-bound token on A's other session answers exactly as on a session that does not exist.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LocalKeyring } from '../../lib/audit/local-keyring.js';
import { SCOPES, type Scope } from '../../lib/contract/scopes.js';
import { LocalSecretSealer } from '../../lib/deploy/local-sealer.js';
import { createApp } from '../../lib/http/index.js';
import { ROUTES as ROUTE_DECLARATIONS } from '../../lib/http/routes/index.js';
import { newId } from '../../lib/log/index.js';
import { DEFAULT_ALERT_CONFIG } from '../../lib/service/alerts/index.js';
import { hashToken } from '../../lib/service/index.js';
import { DEFAULT_SIGN_IN_CONFIG } from '../../lib/service/sign-in/deps.js';
import { type Answer, expectError, leaked, navigate, type Req, request } from '../support/http.js';
import { type LocalSegment, writeSession } from '../support/segments.js';
import { makeTenant, mint, type TestTenant, useServer } from '../support/server.js';
import { snapshot, upload } from '../support/stored.js';

/** The ids a route call is made with. */
interface Ids {
  sid: string;
  w: string;
  tokenId: string;
  /** a work item of the session (seed 004) */
  workId: string;
  /** a byte offset for a chunk (the writer's stored length when it is the caller's own writer) */
  offset: number;
  /** an alert target of the tenant (issue 28) */
  alertId: string;
  /** the tenant's name, as `/v1/tenants/{tenant}/oidc` names it (issue 29) */
  tenant: string;
  /** a person (sign-in identity) of the tenant (issue 29) */
  email: string;
}

/** How the suite calls a route: the table below. */
interface CallCase {
  /** the scopes that may make this call, when not the declaration's (a route that declares none) */
  scopes?: Scope[];
  /** whether the call carries a tenant's session, writer or token id: (a) and (d) probe those */
  ids: boolean;
  /** what a caller gets for ids its tenant does not hold (for `ids` routes) */
  missing?: number;
  /** what an anonymous caller gets, when not 401 (public routes, pages) */
  anonymous?: number;
  /**
   * what a board viewer gets on a page that needs another scope, when it is not sent to sign in (the
   * alerts pages: a page saying which token to ask for)
   */
  boardViewer?: number;
  call: (ids: Ids) => Req;
}

/** A route as the suite probes it: the call, with its auth and scopes from the route's declaration. */
interface RouteCase extends CallCase {
  /** `bearer`: the /v1 API; `page`: an HTML board page (cookie or bearer); `public`: no token needed */
  auth: 'bearer' | 'page' | 'public';
  /** the scopes that may call it (for `public`, none) */
  scopes: Scope[];
}

const ALL_SCOPES: Scope[] = [...SCOPES];

/** Every declared operation, by `METHOD /hono/:path` as the app serves it. */
const DECLARED = new Map(ROUTE_DECLARATIONS.map((op) => [`${op.method.toUpperCase()} ${op.honoPath}`, op]));

/** A note event of writer `w` of session `sid` with sequence number `seq`, as one NDJSON line. */
function noteLine(sid: string, w: string, seq: number): string {
  const ts = `${new Date().toISOString().slice(0, 23)}000Z`;
  return `${JSON.stringify({ v: 3, sid, w, seq, id: newId('e'), ts, mono: seq, type: 'note', author: 'isolation', text: 'probe' })}\n`;
}

const CALLS: Record<string, CallCase> = {
  'GET /healthz': { ids: false, anonymous: 200, call: () => get('/healthz') },
  'GET /v1/openapi.json': {
    ids: false,
    anonymous: 200,
    call: () => get('/v1/openapi.json'),
  },
  'GET /v1/docs': { ids: false, anonymous: 200, call: () => get('/v1/docs') },
  // public keys of the signed digests (issue 15.2): the same for everyone, no token needed
  'GET /v1/keys': { ids: false, anonymous: 200, call: () => get('/v1/keys') },
  'GET /v1/board': { ids: false, call: () => get('/v1/board') },
  'GET /v1/board/overview': { ids: false, call: () => get('/v1/board/overview') },
  'POST /v1/sessions/:sid/writers/:w/chunks': {
    ids: true,
    // a caller holding nothing of this writer is told to start at 0
    missing: 409,
    call: (i) => ({
      method: 'POST',
      path: `/v1/sessions/${i.sid}/writers/${i.w}/chunks?offset=${i.offset}`,
      body: noteLine(i.sid, i.w, 100 + i.offset),
    }),
  },
  'GET /v1/sessions/:sid/writers/:w': {
    ids: true,
    missing: 404,
    call: (i) => get(`/v1/sessions/${i.sid}/writers/${i.w}`),
  },
  'GET /v1/sessions/:sid/writers/:w/chunks': {
    ids: true,
    missing: 404,
    call: (i) => get(`/v1/sessions/${i.sid}/writers/${i.w}/chunks`),
  },
  'GET /v1/sessions/:sid/writers/:w/segment': {
    ids: true,
    missing: 404,
    call: (i) => get(`/v1/sessions/${i.sid}/writers/${i.w}/segment`),
  },
  'GET /v1/sessions': { ids: false, call: () => get('/v1/sessions') },
  'GET /v1/sessions/:sid': {
    ids: true,
    missing: 404,
    call: (i) => get(`/v1/sessions/${i.sid}`),
  },
  'GET /v1/sessions/:sid/replay': {
    ids: true,
    missing: 404,
    call: (i) => get(`/v1/sessions/${i.sid}/replay`),
  },
  'GET /v1/sessions/:sid/export': {
    ids: true,
    missing: 404,
    call: (i) => get(`/v1/sessions/${i.sid}/export`),
  },
  // signs an export digest (issue 15.3); C on A's session must get the 404 of a missing one
  'POST /v1/sessions/:sid/digests': {
    ids: true,
    missing: 404,
    call: (i) => ({ method: 'POST', path: `/v1/sessions/${i.sid}/digests` }),
  },
  'GET /v1/sessions/:sid/verify': {
    ids: true,
    missing: 404,
    call: (i) => get(`/v1/sessions/${i.sid}/verify`),
  },
  'GET /v1/sessions/:sid/inspect': {
    ids: true,
    missing: 404,
    call: (i) => get(`/v1/sessions/${i.sid}/inspect`),
  },
  'GET /v1/sessions/:sid/attribution': {
    ids: true,
    missing: 404,
    call: (i) => get(`/v1/sessions/${i.sid}/attribution`),
  },
  'POST /v1/sessions/:sid/status': {
    ids: true,
    // a report needs no session: it lands in the caller's own tenant
    missing: 201,
    call: (i) => ({
      method: 'POST',
      path: `/v1/sessions/${i.sid}/status`,
      json: { state: 'blocked', note: 'isolation probe' },
    }),
  },
  'GET /v1/sessions/:sid/status': {
    ids: true,
    missing: 404,
    call: (i) => get(`/v1/sessions/${i.sid}/status`),
  },
  'POST /v1/tokens': {
    ids: false,
    call: () => ({ method: 'POST', path: '/v1/tokens', json: { scopes: ['read'], label: 'isolation' } }),
  },
  'POST /v1/sessions/:sid/tokens': {
    // The declaration names no scope (the verb decides from what is asked); this call asks for all three
    // session scopes, which only an admin (or a token holding all three) may hand on.
    scopes: ['admin'],
    ids: true,
    // a session token needs no session yet: it is minted in the caller's own tenant
    missing: 201,
    call: (i) => ({
      method: 'POST',
      path: `/v1/sessions/${i.sid}/tokens`,
      json: { scopes: ['ingest', 'report', 'read'], label: 'isolation' },
    }),
  },
  'GET /v1/tokens': { ids: false, call: () => get('/v1/tokens') },
  // token usage and cost (issue 27): a session's from its writers' records, the tenant's from its buckets
  'GET /v1/sessions/:sid/usage': {
    ids: true,
    missing: 404,
    call: (i) => get(`/v1/sessions/${i.sid}/usage`),
  },
  'GET /v1/usage': { ids: false, call: () => get('/v1/usage') },
  'POST /v1/usage/recompute': {
    ids: true,
    missing: 404,
    call: (i) => ({ method: 'POST', path: `/v1/usage/recompute?sid=${i.sid}` }),
  },
  // the caller's own token (issue 24 item 5): every scope may ask, and it names only the caller's own
  'GET /v1/tokens/self': { scopes: ALL_SCOPES, ids: false, call: () => get('/v1/tokens/self') },
  'DELETE /v1/tokens/:id': {
    ids: true,
    missing: 404,
    call: (i) => ({ method: 'DELETE', path: `/v1/tokens/${i.tokenId}` }),
  },
  'POST /v1/work': {
    ids: true,
    // a work item names its session; it is started in the caller's own tenant
    missing: 201,
    call: (i) => ({ method: 'POST', path: '/v1/work', json: { ...workOwner(i), ...WORK_START } }),
  },
  'GET /v1/work': { ids: false, call: () => get('/v1/work') },
  'GET /v1/work/:id': { ids: true, missing: 404, call: (i) => get(`/v1/work/${i.workId}`) },
  'POST /v1/work/:id/heartbeat': {
    ids: true,
    missing: 404,
    call: (i) => ({ method: 'POST', path: `/v1/work/${i.workId}/heartbeat`, json: workOwner(i) }),
  },
  'POST /v1/work/:id/checkpoint': {
    ids: true,
    missing: 404,
    call: (i) => ({
      method: 'POST',
      path: `/v1/work/${i.workId}/checkpoint`,
      json: { ...workOwner(i), summary: 'isolation probe' },
    }),
  },
  'POST /v1/work/:id/wait': {
    ids: true,
    missing: 404,
    call: (i) => ({
      method: 'POST',
      path: `/v1/work/${i.workId}/wait`,
      json: { ...workOwner(i), dependency: { kind: 'review' }, reason: 'isolation probe' },
    }),
  },
  'POST /v1/work/:id/resume': {
    ids: true,
    missing: 404,
    call: (i) => ({
      method: 'POST',
      path: `/v1/work/${i.workId}/resume`,
      json: {
        ...workOwner(i),
        op: 'checkpoint',
        idempotency_key: 'isolation-0001',
        body: { mode: 'testing' },
      },
    }),
  },
  // Last of the work routes: after it, the others would be told the item is stopped.
  'POST /v1/work/:id/stop': {
    ids: true,
    missing: 404,
    call: (i) => ({
      method: 'POST',
      path: `/v1/work/${i.workId}/stop`,
      json: { ...workOwner(i), outcome: 'paused' },
    }),
  },
  // alerts (issue 28): a target's id is the tenant's, a session's alerts are its tenant's
  'GET /v1/alerts': { ids: false, call: () => get('/v1/alerts') },
  'POST /v1/alerts': {
    ids: false,
    call: () => ({ method: 'POST', path: '/v1/alerts', json: { url: PUBLIC_TARGET, label: 'isolation' } }),
  },
  'POST /v1/alerts/:id/rotate': {
    ids: true,
    missing: 404,
    call: (i) => ({ method: 'POST', path: `/v1/alerts/${i.alertId}/rotate`, json: { grace_seconds: 60 } }),
  },
  'POST /v1/alerts/:id/test': {
    ids: true,
    missing: 404,
    call: (i) => ({ method: 'POST', path: `/v1/alerts/${i.alertId}/test` }),
  },
  'GET /v1/alerts/:id/deliveries': {
    ids: true,
    missing: 404,
    call: (i) => get(`/v1/alerts/${i.alertId}/deliveries`),
  },
  // Last of the alert routes: after it, the others would be told the target does not exist.
  'DELETE /v1/alerts/:id': {
    ids: true,
    missing: 404,
    call: (i) => ({ method: 'DELETE', path: `/v1/alerts/${i.alertId}` }),
  },
  'GET /v1/sessions/:sid/alerts': {
    ids: true,
    // a session nobody recorded (or another tenant's) is a 404, as on the other session routes
    missing: 404,
    call: (i) => get(`/v1/sessions/${i.sid}/alerts`),
  },
  // team sign-in (issue 29): a tenant's OIDC settings are its own (another tenant's name answers as one
  // that does not exist), as are its people (by email) and its audit list
  'GET /v1/tenants/:tenant/oidc': {
    ids: true,
    missing: 404,
    call: (i) => get(`/v1/tenants/${i.tenant}/oidc`),
  },
  'PUT /v1/tenants/:tenant/oidc': {
    ids: true,
    missing: 404,
    call: (i) => ({ method: 'PUT', path: `/v1/tenants/${i.tenant}/oidc?check=0`, json: OIDC_SETTINGS }),
  },
  'DELETE /v1/tenants/:tenant/oidc': {
    ids: true,
    missing: 404,
    call: (i) => ({ method: 'DELETE', path: `/v1/tenants/${i.tenant}/oidc` }),
  },
  'GET /v1/people': { ids: false, call: () => get('/v1/people') },
  'GET /v1/people/:email': {
    ids: true,
    missing: 404,
    call: (i) => get(`/v1/people/${encodeURIComponent(i.email)}`),
  },
  'PUT /v1/people/:email': {
    ids: true,
    // a person is made in the caller's own tenant by a link
    missing: 200,
    call: (i) => ({
      method: 'PUT',
      path: `/v1/people/${encodeURIComponent(i.email)}`,
      json: { link: ['isolation-probe'] },
    }),
  },
  'GET /v1/audit-log': { ids: false, call: () => get('/v1/audit-log') },
  // search (issue 30): a word every tenant's sessions hold; (d) sees B find its own sessions, never A's.
  // No id is sent: a `session:` filter of another tenant's session finds nothing (200, not 404).
  'GET /v1/search': { ids: false, call: () => get('/v1/search?q=payments') },
  'GET /v1/search/status': { ids: false, call: () => get('/v1/search/status') },
  'POST /v1/search/reindex': {
    ids: false,
    call: () => ({ method: 'POST', path: '/v1/search/reindex', json: {} }),
  },
  'GET /search': { ids: false, anonymous: 302, call: () => get('/search?q=payments') },
  'GET /login': { ids: false, anonymous: 200, call: () => get('/login') },
  // Signing in takes the token in the form, not the header: without one it shows the form again (401).
  'POST /login': {
    ids: false,
    anonymous: 401,
    call: () => ({
      method: 'POST',
      path: '/login',
      body: 'token=',
      // a browser's form post names its origin; the board's CSRF guard refuses one from elsewhere
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: srv.url },
    }),
  },
  'POST /logout': {
    ids: false,
    anonymous: 303,
    call: () => ({
      method: 'POST',
      path: '/logout',
      body: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: srv.url },
    }),
  },
  // Organisation sign-in (issue 29): no tenant named is a 400 page; a callback with no flow under way in
  // this browser signs nobody in (400 page), whoever calls it.
  'GET /login/oidc': { ids: false, anonymous: 400, call: () => get('/login/oidc') },
  'GET /login/oidc/callback': {
    ids: false,
    anonymous: 400,
    call: () => get('/login/oidc/callback?code=x&state=y'),
  },
  'GET /': { ids: false, anonymous: 302, call: () => get('/') },
  'GET /sessions/:sid': {
    ids: true,
    missing: 404,
    anonymous: 302,
    call: (i) => get(`/sessions/${i.sid}`),
  },
  'GET /people/:user_id': { ids: false, anonymous: 302, call: () => get('/people/priya') },
  'GET /agents/:agent': { ids: false, anonymous: 302, call: () => get('/agents/claude-code') },
  // The alerts page and its test button (issue 28 item 5): admin, as /v1/alerts; a board viewer is told
  // which token to ask for. The button's POST comes from the board's own page, as a browser sends it.
  'GET /alerts': { ids: false, anonymous: 302, boardViewer: 403, call: () => get('/alerts') },
  'POST /alerts/:id/test': {
    ids: true,
    // another tenant's target, as a removed one: back to the page saying it is gone
    missing: 303,
    anonymous: 302,
    boardViewer: 403,
    call: (i) => ({
      method: 'POST',
      path: `/alerts/${i.alertId}/test`,
      body: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: srv.url },
    }),
  },
  // The audit list and the tokens page with its "Revoke" button (issue 29 item 4): admin, as /v1/audit-log
  // and /v1/tokens; a board viewer is told what to ask for. Another tenant's token id, as one that does
  // not exist: back to the page saying it is gone, nothing revoked.
  'GET /audit': { ids: false, anonymous: 302, boardViewer: 403, call: () => get('/audit') },
  'GET /tokens': { ids: false, anonymous: 302, boardViewer: 403, call: () => get('/tokens') },
  'POST /tokens/:id/revoke': {
    ids: true,
    missing: 303,
    anonymous: 302,
    boardViewer: 403,
    call: (i) => ({
      method: 'POST',
      path: `/tokens/${i.tokenId}/revoke`,
      body: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: srv.url },
    }),
  },
  // The live updates answer a script: JSON errors, no redirect to sign-in.
  'GET /board/events': { ids: false, call: () => get('/board/events') },
  'GET /board/fragment': { ids: false, call: () => get('/board/fragment') },
  'GET /assets/:name': { ids: false, anonymous: 200, call: () => get('/assets/board.js') },
};

/**
 * Each row of `CALLS` with what its route declares (lib/http/routes/): how it authenticates and the
 * scopes of which a caller needs one. (b) below calls it with every scope, so a declaration that names a
 * scope its verb does not accept, or leaves out one it does, fails there.
 */
const ROUTES: Record<string, RouteCase> = Object.fromEntries(
  Object.entries(CALLS).map(([route, call]) => {
    const op = DECLARED.get(route);
    if (!op) throw new Error(`${route}: no route declares it (lib/http/routes/index.ts)`);
    const auth = op.auth === 'none' ? 'public' : op.auth === 'cookie' ? 'page' : 'bearer';
    return [route, { ...call, auth, scopes: call.scopes ?? [...op.scopes] }];
  }),
);

/** The owner fields of a work request on the session of `i`. */
function workOwner(i: Ids) {
  return { session: i.sid, system: 'isolation', actor: 'prober' };
}
const WORK_START = {
  subject: { kind: 'free', ref: 'isolation' },
  mode: 'testing',
  summary: 'isolation probe',
};

/** A target URL the suite's server accepts without resolving it: a public address, given as one. */
const PUBLIC_TARGET = 'https://93.184.215.14/hansard-isolation';
/** OIDC settings stored unchecked (`check=0`): nothing is fetched from the issuer. */
const OIDC_SETTINGS = {
  issuer: 'http://127.0.0.1:9/isolation',
  client_id: 'isolation',
  client_secret: 'isolation-probe-secret',
};

function get(path: string): Req {
  return { method: 'GET', path };
}

/** What a tenant holds for the suite: its session, writer, a token id to revoke, and every secret. */
interface Held {
  tenant: TestTenant;
  seg: LocalSegment;
  /** a second session (A's session-bound token is bound to it) */
  other: LocalSegment;
  /** a token of the tenant that the probes try to revoke */
  victimTokenId: string;
  /** a work item in `seg`'s session */
  workId: string;
  /** one token per scope */
  single: Record<Scope, string>;
  /** an alert target of the tenant, and its signing secret */
  alertId: string;
  alertSecret: string;
  /** a person of the tenant (issue 29), and its OIDC client secret */
  email: string;
  oidcSecret: string;
}

// A live board stream ends after 300 ms here, so that every call of it has a whole answer to compare.
// A signing key, so the export route answers its allowed scopes 200 (issue 15.3).
// A sealer of alert targets' secrets, so the alert routes answer their allowed scopes (issue 28), and
// of OIDC client secrets, so the sign-in routes do (issue 29).
const keysDir = mkdtempSync(join(tmpdir(), 'hansard-isolation-keys-'));
const { keyring } = LocalKeyring.open(keysDir);
const srv = useServer({
  tenants: [],
  deps: {
    liveTiming: { lifetimeMs: 300, checkMs: 100 },
    signer: keyring,
    alerts: { sealer: new LocalSecretSealer(keysDir), config: DEFAULT_ALERT_CONFIG },
    signIn: { sealer: new LocalSecretSealer(keysDir), config: DEFAULT_SIGN_IN_CONFIG },
  },
});
let A: Held;
let B: Held;
let C: TestTenant;
/** A's session-bound token (ingest, report, read, board), bound to `A.other` */
let boundA: string;
let probers = 0;

async function hold(name: string): Promise<Held> {
  const tenant = await makeTenant(srv, name);
  const seg = writeSession(srv.workDir, { open: true, agent: `${name}-agent` });
  const other = writeSession(srv.workDir, { agent: `${name}-other` });
  await upload(srv, tenant.admin, seg);
  await upload(srv, tenant.admin, other);
  const st = await request(srv, {
    method: 'POST',
    path: `/v1/sessions/${seg.sid}/status`,
    token: tenant.admin,
    json: { state: 'working', note: `${name} is busy` },
  });
  expect(st.status, st.text).toBe(201);
  const victim = await mint(srv, name, ['read']);
  const single = {} as Record<Scope, string>;
  for (const s of SCOPES) single[s] = await mint(srv, name, [s]);
  const work = await request(srv, {
    method: 'POST',
    path: '/v1/work',
    token: single.report,
    json: { session: seg.sid, system: 'isolation', actor: 'prober', ...WORK_START },
  });
  expect(work.status, work.text).toBe(201);
  const alert = await request(srv, {
    method: 'POST',
    path: '/v1/alerts',
    token: tenant.admin,
    json: { url: PUBLIC_TARGET, label: `${name} alerts` },
  });
  expect(alert.status, alert.text).toBe(201);
  // sign-in settings, a person and so audit entries of its own (issue 29)
  const oidcSecret = `${name}-oidc-secret`;
  const oidc = await request(srv, {
    method: 'PUT',
    path: `/v1/tenants/${name}/oidc?check=0`,
    token: tenant.admin,
    json: { ...OIDC_SETTINGS, client_id: `${name}-client`, client_secret: oidcSecret },
  });
  expect(oidc.status, oidc.text).toBe(200);
  const email = `lead-${name}@example.com`;
  const person = await request(srv, {
    method: 'PUT',
    path: `/v1/people/${encodeURIComponent(email)}`,
    token: tenant.admin,
    json: { link: [`${name}-person`], role: 'member' },
  });
  expect(person.status, person.text).toBe(200);
  return {
    tenant,
    seg,
    other,
    victimTokenId: await tokenId(victim),
    workId: work.json.id,
    single,
    alertId: alert.json.id,
    alertSecret: alert.json.secret,
    email,
    oidcSecret,
  };
}

async function tokenId(secret: string): Promise<string> {
  return (await srv.stores.state.getTokenByHash(hashToken(secret)))!.id;
}

/** A's ids as a caller names them. */
function idsOf(h: Held): Ids {
  return {
    sid: h.seg.sid,
    w: h.seg.w,
    tokenId: h.victimTokenId,
    workId: h.workId,
    offset: h.seg.bytes.length,
    alertId: h.alertId,
    tenant: h.tenant.name,
    email: h.email,
  };
}

function freshIds(): Ids {
  return {
    sid: newId('s'),
    w: newId('w'),
    tokenId: `tok_${newId('e').slice(2)}`,
    workId: `wk_${newId('e').slice(2)}`,
    offset: 1234,
    alertId: `at_${newId('e').slice(2)}`,
    tenant: `tenant-z-${newId('e').slice(-10).toLowerCase()}`,
    email: `${newId('e').slice(-10).toLowerCase()}@example.com`,
  };
}

/** Everything of A another tenant must never see: ids, token ids, secrets and their hashes. */
async function secretsOf(h: Held, extraSecrets: string[]): Promise<Set<string>> {
  const out = new Set<string>([
    h.seg.sid,
    h.seg.w,
    h.other.sid,
    h.other.w,
    h.tenant.name,
    h.workId,
    h.alertId,
    h.alertSecret,
    h.email,
    h.oidcSecret,
    `${h.tenant.name}-person`,
  ]);
  for (const t of await srv.stores.state.listAlertTargets(h.tenant.name)) out.add(t.id);
  for (const e of (await srv.stores.state.listAudit(h.tenant.name, { limit: 1000 })).items) out.add(e.id);
  for (const t of await srv.stores.state.listTokens(h.tenant.name)) {
    out.add(t.id);
    out.add(t.hash);
  }
  for (const s of [h.tenant.admin, ...Object.values(h.single), ...extraSecrets]) {
    out.add(s);
    out.add(hashToken(s));
  }
  return out;
}

/** The ids a request carried, the email before the tenant's name (which it holds). */
function sentIds(sent: Ids): string[] {
  return [sent.sid, sent.w, sent.tokenId, sent.workId, sent.alertId, sent.email, sent.tenant];
}

/** The answer with the ids the request carried masked, and what is minted per request. */
function masked(a: Answer, sent: Ids): string {
  let t = a.text;
  for (const v of sentIds(sent)) t = t.replaceAll(v, '<sent id>');
  return t
    .replace(/hns_[0-9A-Za-z]{43}/g, '<secret>')
    .replace(/tok_[0-9A-HJKMNP-TV-Z]{26}/g, '<token id>')
    .replace(/wk_[0-9A-HJKMNP-TV-Z]{26}/g, '<work id>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>');
}

/** Status, content type and body, for comparing two answers. */
function shape(a: Answer, body: string): string {
  return `${a.status} ${a.headers.get('content-type')} ${a.headers.get('location') ?? ''}\n${body}`;
}

const answered: { what: string; a: Answer; sent: Ids | null }[] = [];

async function call(route: string, ids: Ids, token: string | null): Promise<Answer> {
  return request(srv, { ...ROUTES[route]!.call(ids), token });
}

/** Where a board page sends a browser to sign in: `/login`, with `?next=` back to any page (a GET) but `/`. */
function signInFor(route: string, ids: Ids): string {
  const { method, path } = ROUTES[route]!.call(ids);
  // a form's POST cannot be replayed after signing in: to the sign-in page alone
  return path === '/' || method !== 'GET' ? '/login' : `/login?next=${encodeURIComponent(path)}`;
}

beforeAll(async () => {
  A = await hold('tenant-a-7f3k');
  B = await hold('tenant-b-9q2m');
  C = await makeTenant(srv, 'tenant-c-4x8v');
  boundA = await mint(srv, A.tenant.name, ['ingest', 'report', 'read', 'board'], A.other.sid);
  // what the tenants hold is searchable (issue 30): the index's queue drained, as the server's drain does
  await srv.indexNow();
});

describe('the route table', () => {
  it('has a row for every route the app serves, and no row for a route it does not serve', () => {
    const app = createApp({ segments: srv.stores.segments, state: srv.stores.state });
    const served = new Set(app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${r.path}`));
    expect([...served].sort()).toEqual(Object.keys(ROUTES).sort());
  });
});

describe('(a) another tenant on A’s ids answers as for ids that do not exist', () => {
  for (const [route, rc] of Object.entries(ROUTES)) {
    if (!rc.ids) continue;
    it(`${route}: the same status and bytes as a fresh id (${rc.missing})`, async () => {
      const before = await snapshot(srv, A.tenant.admin, A.seg);
      const ids = idsOf(A);
      const fresh = freshIds();
      // A route that creates in the caller's tenant gets a prober of its own, so that C's later reads of
      // A's ids still find nothing of C's either.
      const prober = rc.missing! < 400 ? (await makeTenant(srv, `tenant-p-${++probers}`)).admin : C.admin;
      const onA = await call(route, ids, prober);
      const onFresh = await call(route, fresh, prober);
      answered.push({ what: `C on A: ${route}`, a: onA, sent: ids });
      expect(onA.status, onA.text).toBe(rc.missing);
      if (onA.status >= 400) {
        // an error answer names nothing that was sent: byte for byte the same
        expect(shape(onA, onA.text)).toBe(shape(onFresh, onFresh.text));
        if (rc.auth !== 'page') expectError(srv, onA, rc.missing!);
      } else {
        expect(shape(onA, masked(onA, ids))).toBe(shape(onFresh, masked(onFresh, fresh)));
      }
      // nothing of A changed: its files, its writer, its status, its listing and its tokens
      expect(await snapshot(srv, A.tenant.admin, A.seg)).toEqual(before);
    });
  }

  it('leaves A’s token that C tried to revoke working', async () => {
    const victim = (await srv.stores.state.listTokens(A.tenant.name)).find((t) => t.id === A.victimTokenId)!;
    expect(victim.revoked_at).toBeNull();
  });
});

describe('(b) a token of a scope the route does not allow is refused', () => {
  for (const [route, rc] of Object.entries(ROUTES)) {
    if (rc.auth === 'public') continue;
    const refused = ALL_SCOPES.filter((s) => !rc.scopes.includes(s));
    it(`${route}: ${refused.join(', ')} refused; ${rc.scopes.join(', ')} let through`, async () => {
      for (const scope of refused) {
        const before = await snapshot(srv, A.tenant.admin, A.seg);
        const a = await call(route, idsOf(A), A.single[scope]);
        if (rc.auth === 'page' && scope === 'board' && rc.boardViewer !== undefined) {
          // signed in, but not for this page: a page saying which token to ask for
          expect(a.status, `${scope}: ${a.text}`).toBe(rc.boardViewer);
          expect(a.headers.get('location')).toBeNull();
        } else if (rc.auth === 'page') {
          // a browser without the board scope is sent to sign in, not shown a JSON error
          expect(a.status, `${scope}: ${a.text}`).toBe(302);
          expect(a.headers.get('location')).toBe(signInFor(route, idsOf(A)));
        } else {
          const err = expectError(srv, a, 403, 'forbidden');
          const required = err.details.required as string[];
          expect(Array.isArray(required) && required.length > 0).toBe(true);
          if (route !== 'POST /v1/sessions/:sid/tokens')
            expect([...required].sort()).toEqual([...rc.scopes].sort());
        }
        expect(await snapshot(srv, A.tenant.admin, A.seg)).toEqual(before);
      }
      for (const scope of rc.scopes) {
        const throwaway = await tokenId(await mint(srv, A.tenant.name, ['read']));
        const a = await call(route, { ...idsOf(A), tokenId: throwaway }, A.single[scope]);
        expect([401, 403], `${scope} on ${route}: ${a.text}`).not.toContain(a.status);
        // not sent to sign in (a form's POST may redirect back to its page)
        if (rc.auth === 'page') expect(a.headers.get('location') ?? '').not.toMatch(/^\/login/);
      }
    });
  }
});

describe('(c) no token', () => {
  for (const [route, rc] of Object.entries(ROUTES)) {
    const expected = rc.anonymous ?? 401;
    it(`${route}: ${expected}`, async () => {
      const a = await call(route, idsOf(A), null);
      expect(a.status, a.text).toBe(expected);
      if (rc.auth === 'bearer') expectError(srv, a, 401, 'unauthorized');
      if (rc.auth === 'page') expect(a.headers.get('location')).toBe(signInFor(route, idsOf(A)));
      expect(leaked(a.text, await secretsOf(A, [boundA]))).toEqual([]);
    });
  }
});

describe('(d) nothing another tenant is answered names A’s things', () => {
  it('B calling every route on its own ids and listings sees none of A’s ids, tokens or hashes', async () => {
    const secrets = await secretsOf(A, [boundA]);
    const own: Ids = {
      ...idsOf(B),
      offset: (await srv.stores.state.getWriter(B.tenant.name, B.seg.sid, B.seg.w))!.length,
    };
    for (const route of Object.keys(ROUTES)) {
      const a = await call(route, own, B.tenant.admin);
      // every route answers B (sign-in alone wants its token in the form, not the header; organisation
      // sign-in takes no token at all: its answers to a call without a flow are 4xx pages)
      const most = route === 'POST /login' ? 402 : route.startsWith('GET /login/oidc') ? 401 : 400;
      expect(a.status, `${route}: ${a.text}`).toBeLessThan(most);
      const headers = [...a.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n');
      expect(leaked(`${headers}\n${a.text}`, secrets), route).toEqual([]);
    }
  });

  it('the answers C got while probing A name nothing of A but the ids C sent', async () => {
    const secrets = await secretsOf(A, [boundA]);
    expect(answered.length).toBeGreaterThan(5);
    for (const { what, a, sent } of answered) {
      let text = a.text;
      for (const v of sent ? sentIds(sent) : []) text = text.replaceAll(v, '<sent id>');
      expect(leaked(text, secrets), what).toEqual([]);
    }
  });

  it('B’s board, as JSON and as HTML, and B’s listings show B’s sessions and never A’s', async () => {
    const secrets = await secretsOf(A, [boundA]);
    const boardJson = await request(srv, { method: 'GET', path: '/v1/board', token: B.single.board });
    expect(boardJson.status).toBe(200);
    expect(boardJson.json.sessions.map((s: { sid: string }) => s.sid).sort()).toEqual(
      [B.seg.sid, B.other.sid].sort(),
    );
    // the page through the sign-in link and its cookie, as a browser gets it
    const signIn = await navigate(srv, `/?token=${B.single.board}`);
    expect(signIn.status).toBe(303);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const page = await request(srv, { method: 'GET', path: '/', headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.text).toContain(B.seg.sid);
    const timeline = await request(srv, {
      method: 'GET',
      path: `/sessions/${B.seg.sid}`,
      headers: { cookie },
    });
    expect(timeline.status).toBe(200);
    const theirs = await request(srv, { method: 'GET', path: `/sessions/${A.seg.sid}`, headers: { cookie } });
    expect(theirs.status).toBe(404);
    const listing = await request(srv, {
      method: 'GET',
      path: '/v1/sessions?limit=200',
      token: B.tenant.admin,
    });
    const tokens = await request(srv, { method: 'GET', path: '/v1/tokens', token: B.tenant.admin });
    for (const a of [boardJson, page, timeline, theirs, listing, tokens]) {
      expect(leaked(a.text, secrets)).toEqual([]);
    }
  });

  it('search: a phrase only A holds is found by A, never by B, C or A’s token bound to another session', async () => {
    // the reindexes (b) and (d) asked for are done first
    await srv.indexNow();
    // A's writer's agent is `tenant-a-7f3k-agent`: its words are in A's documents alone
    const q = `/v1/search?q=${encodeURIComponent('"tenant-a-7f3k-agent"')}&limit=50`;
    const own = await request(srv, { method: 'GET', path: q, token: A.single.read });
    expect(own.status, own.text).toBe(200);
    expect(new Set(own.json.hits.map((h: { sid: string }) => h.sid))).toEqual(new Set([A.seg.sid]));
    for (const token of [B.single.read, C.admin, boundA]) {
      const a = await request(srv, { method: 'GET', path: q, token });
      expect(a.status, a.text).toBe(200);
      expect(a.json.hits).toEqual([]);
    }
    const named = `/v1/search?q=${encodeURIComponent(`payments session:${A.seg.sid}`)}`;
    for (const token of [B.single.read, boundA]) {
      expect((await request(srv, { method: 'GET', path: named, token })).json.hits).toEqual([]);
    }
  });

  it('B’s people and audit list are B’s own: none of A’s people or entries', async () => {
    const people = await request(srv, { method: 'GET', path: '/v1/people?limit=200', token: B.tenant.admin });
    expect(people.status, people.text).toBe(200);
    expect(people.json.people.map((p: { email: string }) => p.email)).toEqual([B.email]);
    const log = await request(srv, { method: 'GET', path: '/v1/audit-log?limit=200', token: B.tenant.admin });
    expect(log.status, log.text).toBe(200);
    const theirs = new Set(
      (await srv.stores.state.listAudit(A.tenant.name, { limit: 1000 })).items.map((e) => e.id),
    );
    expect(theirs.size).toBeGreaterThan(0);
    for (const e of log.json.entries as { id: string }[]) expect(theirs.has(e.id)).toBe(false);
    expect(leaked(`${people.text}\n${log.text}`, await secretsOf(A, [boundA]))).toEqual([]);
  });

  it('the server log holds no token secret', () => {
    const secrets = [A.tenant.admin, B.tenant.admin, C.admin, boundA, ...Object.values(A.single)];
    expect(leaked(srv.logged.join('\n'), secrets)).toEqual([]);
    expect(srv.logged.join('\n')).not.toMatch(/hns_[0-9A-Za-z]{43}/);
  });
});

describe('(e) a session-bound token on another session of its tenant answers as for a missing one', () => {
  for (const [route, rc] of Object.entries(ROUTES)) {
    // An alert target, a tenant's sign-in settings, its people and its tokens are the tenant's, not a
    // session's: a session-bound token (never an admin) is refused those routes for its scope (b),
    // whatever they name.
    if (
      !rc.ids ||
      route.startsWith('DELETE /v1/tokens') ||
      route.startsWith('POST /tokens/') ||
      route.includes('/alerts/') ||
      route.includes('/v1/tenants/') ||
      route.includes('/v1/people/')
    )
      continue;
    it(`${route}: 404, the same bytes as a session that does not exist`, async () => {
      const before = await snapshot(srv, A.tenant.admin, A.seg);
      const onOther = await call(route, idsOf(A), boundA);
      const onFresh = await call(route, freshIds(), boundA);
      if (rc.auth === 'page') {
        expect(onOther.status).toBe(404);
      } else if (route === 'POST /v1/sessions/:sid/tokens') {
        // a session-bound token may not mint tokens at all; on another session it is told "not found"
        expectError(srv, onOther, 404, 'not_found');
      } else {
        expectError(srv, onOther, 404, 'not_found');
      }
      expect(shape(onOther, onOther.text)).toBe(shape(onFresh, onFresh.text));
      expect(await snapshot(srv, A.tenant.admin, A.seg)).toEqual(before);
    });
  }

  it('its listings and board show its own session only', async () => {
    for (const path of ['/v1/sessions', '/v1/board']) {
      const a = await request(srv, { method: 'GET', path, token: boundA });
      expect(a.status, a.text).toBe(200);
      expect(a.json.sessions.map((s: { sid: string }) => s.sid)).toEqual([A.other.sid]);
      expect(a.text).not.toContain(A.seg.sid);
    }
  });

  it('a session-bound token, even with the admin scope, cannot list, mint or revoke the tenant’s tokens', async () => {
    const boundAdmin = await mint(srv, A.tenant.name, ['admin', 'read'], A.other.sid);
    const tries: Req[] = [
      get('/v1/tokens'),
      { method: 'POST', path: '/v1/tokens', json: { scopes: ['read'] } },
      { method: 'DELETE', path: `/v1/tokens/${A.victimTokenId}` },
    ];
    for (const req of tries) {
      const a = await request(srv, { ...req, token: boundAdmin });
      expectError(srv, a, 403, 'forbidden');
      expect(a.text).not.toContain(A.seg.sid);
    }
    const victim = (await srv.stores.state.listTokens(A.tenant.name)).find((t) => t.id === A.victimTokenId)!;
    expect(victim.revoked_at).toBeNull();
  });
});
