/**
 * `hansard doctor`'s questions to the server (issue 11 item 3): is it up (`GET /healthz`), is the hooks'
 * token valid, and which scopes does it have. The API has no route that describes the caller's token, so
 * the scopes are learnt from routes that check the scope before doing anything and refuse without
 * writing: a 403 `forbidden` names every scope the token has (`details.has`, lib/service/shared/context.ts
 * `requireScope`), and an empty chunk (400 `empty_body`) or an empty status report (400) shows the scope
 * is there. At most five requests, no retries, each within `timeoutMs`.
 */
import { SCOPES, type Scope } from '../../contract/scopes.js';

/** What `GET /healthz` said. */
export type Health = { up: true; version: string | null } | { up: false; reason: string };

/** What the token probes learnt. */
export type TokenProbe =
  | { valid: true; scopes: Scope[]; sessionBound: boolean }
  | { valid: false; reason: string; status: number | null };

/** A session and writer id no one has (ids are `s_`/`w_` + a ULID): the write probes name them. */
const PROBE_SID = 's_00000000000000000000000000';
const PROBE_W = 'w_00000000000000000000000000';

/** What `call` throws when its time ran out. */
class TimedOut extends Error {}

async function call(
  url: string,
  path: string,
  init: { method?: string; token?: string; body?: string; contentType?: string; timeoutMs: number },
): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.contentType) headers['content-type'] = init.contentType;
  // A whole number of ms (AbortSignal.timeout throws RangeError on a fraction); a timeout is told by the
  // signal (`TimedOut`), not by the error's kind.
  const signal = AbortSignal.timeout(Math.min(2 ** 31 - 1, Math.max(1, Math.ceil(init.timeoutMs) || 1)));
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${url.replace(/\/+$/, '')}${path}`, {
      method: init.method ?? 'GET',
      headers,
      ...(init.body !== undefined ? { body: init.body } : {}),
      redirect: 'manual',
      signal,
    });
    text = await res.text();
  } catch (err) {
    throw signal.aborted ? new TimedOut() : err;
  }
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // an HTML page (the board) or nothing: the status says enough
  }
  return { status: res.status, body };
}

/** Why a request failed, in a few words ("connection refused", "no answer within 3 s"). */
function networkReason(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; cause?: { code?: string; message?: string }; message?: string };
  if (err instanceof TimedOut) return `no answer within ${timeoutMs / 1000} s`;
  if (e.cause?.code === 'ECONNREFUSED') return 'connection refused (nothing listens there)';
  if (e.cause?.code === 'ENOTFOUND') return 'unknown host';
  return e.cause?.message ?? e.message ?? String(err);
}

/** `GET /healthz` within `timeoutMs`; never throws. */
export async function checkHealth(url: string, timeoutMs = 3000): Promise<Health> {
  try {
    const r = await call(url, '/healthz', { timeoutMs });
    const b = r.body as { ok?: unknown; version?: unknown } | null;
    if (r.status === 200 && b?.ok === true) {
      return { up: true, version: typeof b.version === 'string' ? b.version : null };
    }
    return { up: false, reason: `GET /healthz answered ${r.status}${b ? '' : ' (not hansard?)'}` };
  } catch (err) {
    return { up: false, reason: networkReason(err, timeoutMs) };
  }
}

const errorOf = (body: unknown) =>
  (body as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | null)?.error;

/**
 * The token's validity and scopes, by the probes described above (admin, ingest, report, read, board, in
 * that order; the first 403 that names the scopes ends it). Never throws: a network failure is
 * `{valid: false, status: null}`.
 */
export async function probeToken(url: string, token: string, timeoutMs = 3000): Promise<TokenProbe> {
  const probes: { scope: Scope; path: string; method?: string; body?: string; contentType?: string }[] = [
    { scope: 'admin', path: '/v1/tokens' },
    {
      scope: 'ingest',
      path: `/v1/sessions/${PROBE_SID}/writers/${PROBE_W}/chunks?offset=0`,
      method: 'POST',
      body: '',
      contentType: 'application/x-ndjson',
    },
    {
      scope: 'report',
      path: `/v1/sessions/${PROBE_SID}/status`,
      method: 'POST',
      body: '{}',
      contentType: 'application/json',
    },
    { scope: 'read', path: '/v1/sessions?limit=1' },
    // the board page: 200 with the board scope, a redirect to /login without it
    { scope: 'board', path: '/' },
  ];
  const has = new Set<Scope>();
  let sessionBound = false;
  for (const p of probes) {
    let r: { status: number; body: unknown };
    try {
      r = await call(url, p.path, { ...p, token, timeoutMs });
    } catch (err) {
      return { valid: false, reason: networkReason(err, timeoutMs), status: null };
    }
    const e = errorOf(r.body);
    if (r.status === 401) {
      return { valid: false, reason: e?.message ?? 'the server does not accept this token', status: 401 };
    }
    if (r.status === 403 && Array.isArray(e?.details?.has)) {
      const named = (e.details.has as unknown[]).filter((s): s is Scope =>
        (SCOPES as readonly string[]).includes(String(s)),
      );
      // A session-bound token answers the ingest probe's made-up session with 404: ask it when the
      // scopes did not come from that probe (a bound token cannot capture arbitrary sessions).
      if (!sessionBound && named.includes('ingest') && p.scope !== 'ingest') {
        try {
          const ingest = probes[1]!;
          sessionBound = (await call(url, ingest.path, { ...ingest, token, timeoutMs })).status === 404;
        } catch {
          // unknown: reported as unbound
        }
      }
      return { valid: true, scopes: named, sessionBound };
    }
    if (r.status === 403) {
      // an admin token bound to one session may not administer tokens: it has the scope all the same
      sessionBound = true;
      has.add(p.scope);
      continue;
    }
    const granted =
      p.scope === 'board' ? r.status === 200 : r.status < 500 && r.status !== 302 && r.status !== 429;
    if (r.status === 429 || r.status >= 500) {
      return {
        valid: false,
        reason: `the server answered ${r.status} ${e?.code ?? ''}`.trim(),
        status: r.status,
      };
    }
    if (granted) has.add(p.scope);
    if (p.scope === 'ingest' && r.status === 404) sessionBound = true;
  }
  return { valid: true, scopes: SCOPES.filter((s) => has.has(s)), sessionBound };
}
