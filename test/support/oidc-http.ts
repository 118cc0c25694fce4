/**
 * A browser without a browser, for the sign-in tests of issue 29 that run no Chromium (the Lambda handler's
 * among them): a cookie jar that keeps cookies as a browser does, and a driver that follows a redirect chain
 * with plain fetch, one hop at a time, filling the test provider's pages (test/support/oidc-provider.ts) on
 * the way: its login form (an email) and its sign-out confirmation.
 *
 * Cookies are kept per host and path, not per port, as browsers do (RFC 6265 §8.5): the provider and the app
 * both on 127.0.0.1 see each other's cookies, so their names must not collide (the provider's are
 * `_session`, `_interaction`, `_interaction_resume` and their `.sig`s). `Secure` is ignored (everything here
 * is loopback, where Chromium keeps Secure cookies over http too); `SameSite` is not enforced (every hop is
 * same-site: one host).
 */

/** One stored cookie. */
interface Cookie {
  name: string;
  value: string;
  host: string;
  path: string;
  /** epoch ms; undefined: a session cookie */
  expires?: number;
}

/** A browser's cookie store, reduced to what a sign-in needs. */
export class CookieJar {
  private cookies: Cookie[] = [];

  /** Stores the `Set-Cookie` values a response from `url` carried (an expired one removes the cookie). */
  store(url: string | URL, setCookies: string[]): void {
    const u = new URL(url);
    for (const line of setCookies) {
      const [pair = '', ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const c: Cookie = {
        name: pair.slice(0, eq).trim(),
        value: pair.slice(eq + 1).trim(),
        host: u.hostname,
        path: u.pathname.slice(0, u.pathname.lastIndexOf('/')) || '/',
      };
      for (const attr of attrs) {
        const [k = '', v = ''] = attr.split('=').map((s) => s.trim());
        const key = k.toLowerCase();
        if (key === 'path' && v.startsWith('/')) c.path = v;
        else if (key === 'max-age') c.expires = Date.now() + Number(v) * 1000;
        else if (key === 'expires' && c.expires === undefined) c.expires = Date.parse(v);
      }
      this.cookies = this.cookies.filter(
        (x) => !(x.name === c.name && x.host === c.host && x.path === c.path),
      );
      if (c.expires === undefined || c.expires > Date.now()) this.cookies.push(c);
    }
  }

  /** The `Cookie` header a browser would send to `url` ('' when none). */
  header(url: string | URL): string {
    return this.matching(url)
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  /** The value of the cookie `name` that would be sent to `url`, or undefined. */
  get(name: string, url: string | URL): string | undefined {
    return this.matching(url).find((c) => c.name === name)?.value;
  }

  private matching(url: string | URL): Cookie[] {
    const u = new URL(url);
    const now = Date.now();
    const inPath = (p: string) =>
      u.pathname === p || u.pathname.startsWith(p.endsWith('/') ? p : `${p}/`) || p === '/';
    // Longer paths first, as browsers order them.
    return this.cookies
      .filter((c) => c.host === u.hostname && inPath(c.path) && (c.expires === undefined || c.expires > now))
      .sort((a, b) => b.path.length - a.path.length);
  }
}

/** One request of a followed chain. */
export interface Hop {
  method: string;
  url: string;
  status: number;
}

/** What a followed chain ended with. */
export interface FollowResult {
  /** the last response (not a redirect, or the one `stopAt` stopped before following) */
  response: Response;
  /** its body, read */
  body: string;
  /** the URL of the last response */
  url: string;
  /** every request made, in order */
  hops: Hop[];
  /** every `Set-Cookie` value from a host:port other than the provider's, in order (the app's cookies) */
  appCookies: string[];
  jar: CookieJar;
}

export interface FollowOptions {
  jar?: CookieJar;
  /**
   * Sends the requests for every origin but the provider's (default: fetch over the network): a Lambda test
   * passes its handler here, turned into a `Request → Response` function.
   */
  fetchApp?: (req: Request) => Promise<Response>;
  /** stop (without requesting it) at the first redirect whose target this returns true for */
  stopAt?: (url: URL) => boolean;
  /** at most this many requests (default 30) */
  maxHops?: number;
}

/** What the driver does on a page of the provider: the form to submit, or null to stop there. */
export type PageAction = (
  url: URL,
  html: string,
) => { action: string; fields: Record<string, string> } | null;

/** The first `<form>` of `html`: its action and its hidden inputs (enough for the provider's pages). */
export function firstForm(html: string): { action: string; fields: Record<string, string> } | null {
  const form = /<form\b[^>]*\baction="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return null;
  const fields: Record<string, string> = {};
  for (const input of form[2]!.matchAll(/<input\b[^>]*>/gi)) {
    const name = /\bname="([^"]*)"/i.exec(input[0])?.[1];
    const type = /\btype="([^"]*)"/i.exec(input[0])?.[1];
    if (name && type === 'hidden')
      fields[name] = unescapeHtml(/\bvalue="([^"]*)"/i.exec(input[0])?.[1] ?? '');
  }
  return { action: unescapeHtml(form[1]!), fields };
}

function unescapeHtml(s: string): string {
  return s
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

/**
 * Follows `start` as a browser would: redirects (303/302/301 become GET, 307/308 keep method and body),
 * cookies through `jar`, and, on a 200 HTML page of `providerOrigin`, the form `onPage` picks (stopping
 * where it returns null). Errors: throws when the chain runs past `maxHops`.
 */
export async function follow(
  start: string,
  providerOrigin: string,
  onPage: PageAction,
  opts: FollowOptions = {},
): Promise<FollowResult> {
  const jar = opts.jar ?? new CookieJar();
  const hops: Hop[] = [];
  const appCookies: string[] = [];
  let url = new URL(start);
  let method = 'GET';
  let body: string | undefined;
  for (let n = 0; n < (opts.maxHops ?? 30); n++) {
    const headers = new Headers({ accept: 'text/html' });
    // The first request is an address the person typed or pasted, as a browser says it (Fetch Metadata).
    if (n === 0) {
      headers.set('sec-fetch-site', 'none');
      headers.set('sec-fetch-mode', 'navigate');
      headers.set('sec-fetch-dest', 'document');
    }
    const cookie = jar.header(url);
    if (cookie) headers.set('cookie', cookie);
    if (body !== undefined) headers.set('content-type', 'application/x-www-form-urlencoded');
    const atProvider = url.origin === providerOrigin;
    const req = new Request(url, { method, headers, body, redirect: 'manual' });
    const res = atProvider || !opts.fetchApp ? await fetch(req) : await opts.fetchApp(req);
    hops.push({ method, url: url.href, status: res.status });
    const setCookies = res.headers.getSetCookie();
    jar.store(url, setCookies);
    if (!atProvider) appCookies.push(...setCookies);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      const next = new URL(location, url);
      if (opts.stopAt?.(next))
        return { response: res, body: await res.text(), url: url.href, hops, appCookies, jar };
      // Read, not cancelled: a body msw let through never settles its cancel() (msw 2.15).
      await res.arrayBuffer().catch(() => undefined);
      if (res.status !== 307 && res.status !== 308) [method, body] = ['GET', undefined];
      url = next;
      continue;
    }
    const text = await res.text();
    const form = atProvider && res.status === 200 ? onPage(url, text) : null;
    if (!form) return { response: res, body: text, url: url.href, hops, appCookies, jar };
    [method, body, url] = ['POST', new URLSearchParams(form.fields).toString(), new URL(form.action, url)];
  }
  throw new Error(`follow: more than ${opts.maxHops ?? 30} requests from ${start}:\n${JSON.stringify(hops)}`);
}
