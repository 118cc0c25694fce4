/**
 * The board's sign-in cookies on the wire (issue 29 item 3): `HttpOnly`, `SameSite=Lax` (the provider's
 * redirect back is a cross-site top-level GET, which Lax lets through and Strict would not), `Path=/`,
 * and `Secure` unless the board is plain http on a loopback address (`npm start`). What they hold and
 * how they are sealed is lib/service/sign-in/cookie.ts.
 */
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { isLoopbackHost } from '../contract/sign-in.js';
import { FLOW_COOKIE, SESSION_COOKIE } from '../service/sign-in/cookie.js';
import { FLOW_SECONDS } from '../service/sign-in/flow.js';

/**
 * Whether cookies set on this request's answer carry `Secure`: always, except on plain http to a loopback
 * host, where a browser would drop a Secure cookie set over http.
 */
export function secureCookies(c: Context): boolean {
  const url = new URL(c.req.url);
  return !(url.protocol === 'http:' && isLoopbackHost(url.hostname));
}

/**
 * Whether this board can keep a sign-in cookie at all: https, or http on loopback. A board on plain http
 * elsewhere (a LAN address) cannot: the browser would drop the Secure cookie and sign-in would loop.
 */
export function canKeepSession(c: Context): boolean {
  const url = new URL(c.req.url);
  return url.protocol === 'https:' || isLoopbackHost(url.hostname);
}

/** The session cookie the request sent, or undefined. */
export function sessionCookie(c: Context): string | undefined {
  return getCookie(c, SESSION_COOKIE);
}

/** Sets the session cookie `value` for `maxAge` seconds. */
export function setSessionCookie(c: Context, value: string, maxAge: number): void {
  setCookie(c, SESSION_COOKIE, value, {
    httpOnly: true,
    sameSite: 'Lax',
    path: '/',
    secure: secureCookies(c),
    maxAge: Math.max(0, Math.floor(maxAge)),
  });
}

/** Clears the session cookie. */
export function clearSessionCookie(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, { path: '/', secure: secureCookies(c) });
}

/** The flow cookie the request sent, or undefined. */
export function flowCookie(c: Context): string | undefined {
  return getCookie(c, FLOW_COOKIE);
}

/** Sets the flow cookie (its life: the flow's ten minutes). Only the callback's path needs it. */
export function setFlowCookie(c: Context, value: string): void {
  setCookie(c, FLOW_COOKIE, value, {
    httpOnly: true,
    sameSite: 'Lax',
    path: '/login/oidc',
    secure: secureCookies(c),
    maxAge: FLOW_SECONDS,
  });
}

/** Clears the flow cookie (a flow is used once). */
export function clearFlowCookie(c: Context): void {
  deleteCookie(c, FLOW_COOKIE, { path: '/login/oidc', secure: secureCookies(c) });
}
