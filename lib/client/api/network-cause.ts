/**
 * What the client says of a request that got no answer (lib/client/api/client.ts): the system error code
 * when there is one, else the error's own words, with no request header quoted and no `hns_` secret in
 * them (the trial of issue 24, item 12: undici's refusal of a header holds the header's whole value).
 */
import { maskTokens } from '../../log/redact/mask-tokens.js';

/**
 * A short reason for a failed fetch: the system error code when there is one (ECONNREFUSED, ENOTFOUND),
 * else its message with no header quoted (undici's `Headers.append: "…" is an invalid header value`
 * holds the whole value, a token's too) and `hns_` secrets masked.
 */
export function networkCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return cause.code === 'ECONNREFUSED' ? 'connection refused' : cause.code;
  const said = cause?.message ?? (err instanceof Error ? err.message : 'network error');
  return maskTokens(said.replace(HEADER_QUOTED, 'a request header is not valid'));
}

/** undici's words for a header it refuses, the header's value or name quoted in them. */
const HEADER_QUOTED = /(?:Headers\.\w+: )?"[\s\S]*" is an invalid header (?:value|name)\.?/g;

/**
 * Whether `err`, thrown by `fetch`, says the request could not be built (undici's TypeError for a header
 * or a URL it refuses, with no cause) rather than that the network failed (`fetch failed`, with a cause).
 */
export function unsendable(err: unknown): boolean {
  return err instanceof TypeError && err.cause === undefined && err.message !== 'fetch failed';
}
