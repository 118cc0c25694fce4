/**
 * The board's form token (issue 28 item 5, issue 29 item 3): every state-changing board form carries a
 * token derived from the secret the browser signed in with (a person's session id, or the link token), besides the same-origin check of the
 * board's POSTs (hono's `csrf()`: `Origin` or `Sec-Fetch-Site`). Another site's page can
 * neither read the HttpOnly cookie nor our page, so it cannot know the token; nothing is stored (the AWS
 * deployment has no session store), and signing in anew (a new token) makes old forms' tokens stale.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { type AppEnv, BOARD_COOKIE, bearerToken } from './auth.js';

/** What the HMAC is keyed for: a token for this purpose only. */
const PURPOSE = 'hansard board form token v1';

/**
 * The secret the request authenticated with: a signed-in person's session id (issue 29: random, inside
 * the sealed cookie, never shown), else its bearer token, else the link-token cookie; or null.
 */
function signedInSecret(c: Context<AppEnv>): string | null {
  const sid = c.get('ctx')?.person?.sid;
  if (sid) return sessionFormSecret(sid);
  const header = c.req.header('authorization');
  return bearerToken(header) ?? (header ? null : (getCookie(c, BOARD_COOKIE) ?? null));
}

/** What a person's session keys its form tokens with: its secret id, named apart from any token. */
export function sessionFormSecret(sid: string): string {
  return `session:${sid}`;
}

/**
 * The form token of the request's sign-in: 43 characters of base64url (HMAC-SHA256 keyed by the secret),
 * or '' when the request carries none (then no form token matches).
 */
export function formToken(c: Context<AppEnv>): string {
  return formTokenOf(signedInSecret(c));
}

/**
 * The form token of a sign-in secret (`session:{sid}` for a person's session, else the token), or ''
 * for none: for a route that checks a form before any sign-in check put the person on the request
 * (`POST /logout`).
 */
export function formTokenOf(secret: string | null): string {
  if (secret === null) return '';
  return createHmac('sha256', secret).update(PURPOSE).digest('base64url');
}

/** Whether `got` (a form's `csrf` field) is the request's form token, compared in constant time. */
export function formTokenOk(c: Context<AppEnv>, got: unknown): boolean {
  return formTokenMatches(formToken(c), got);
}

/** Whether `got` is `want` (a form token, '' matching nothing), compared in constant time. */
export function formTokenMatches(want: string, got: unknown): boolean {
  if (want === '' || typeof got !== 'string') return false;
  const a = Buffer.from(got);
  const b = Buffer.from(want);
  return a.length === b.length && timingSafeEqual(a, b);
}
