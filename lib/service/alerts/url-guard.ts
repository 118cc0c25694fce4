/**
 * Which URLs an alert target may have (issue 28 item 2): `https:` (or `http:`) with a host, no user
 * information, and, unless the operator allowed it (`hansard serve --allow-private-alert-targets`), a host
 * that resolves only to public unicast addresses: never loopback, link-local (cloud metadata at
 * 169.254.169.254), private, unique-local, carrier-grade NAT, multicast or reserved ranges. Checked when a
 * target is added (every address the name has now) and again at each delivery, on the connection itself
 * (lib/service/alerts/send.ts through request-filtering-agent), so a name that later resolves elsewhere
 * (DNS rebinding) is refused too.
 */
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { AppError } from '../shared/errors.js';

/** The one range ipaddr.js calls public. */
const PUBLIC = 'unicast';
/** IPv6 global unicast (RFC 4291 §2.4). */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

/** Whether `address` (IPv4 or IPv6 text) is a public unicast address (an IPv4-mapped IPv6 as its IPv4). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  if (parsed.range() !== PUBLIC) return false;
  // ipaddr.js calls more of IPv6 unicast than is routed publicly (the deprecated IPv4-compatible ::a.b.c.d
  // among it): only global unicast, 2000::/3, is.
  return parsed.kind() === 'ipv4' || parsed.match(GLOBAL_UNICAST);
}

/**
 * The target URL, parsed, once its form and (unless `allowPrivate`) every address its host resolves to
 * are acceptable.
 * @throws AppError `invalid_target` (400) naming what is wrong: the scheme, credentials in the URL, a host
 *   that does not resolve, or a private address (with `address` and how the operator allows it)
 */
export async function checkTargetUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError(
      'invalid_target',
      `${JSON.stringify(raw.slice(0, 200))} is not a URL: give https://host/path`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new AppError('invalid_target', `a target URL is https:// (or http://), not ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw new AppError(
      'invalid_target',
      'a target URL may not carry a user name or password: put a secret in the path (as Slack does) instead',
    );
  }
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = ipaddr.isValid(host)
      ? [host]
      : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch (err) {
    throw new AppError(
      'invalid_target',
      `the target's host ${host} does not resolve (${(err as { code?: string }).code ?? 'no address'}): check the URL`,
      { host },
    );
  }
  const refused = addresses.find((a) => !isPublicAddress(a));
  if (refused !== undefined) {
    throw new AppError(
      'invalid_target',
      `${ipaddr.isValid(host) ? `the target's address ${host} is` : `the target's host ${host} resolves to ${refused},`} a loopback, link-local or private address: alerts go to public addresses only (an operator can allow private ones with hansard serve --allow-private-alert-targets)`,
      { host, address: refused },
    );
  }
  return url;
}
