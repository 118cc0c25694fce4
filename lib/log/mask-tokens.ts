/**
 * `hns_` token secrets masked in text for a log (issue 24 item 6, DESIGN §4 "no token in logs"): what the
 * server's request log, its error lines, the local server's stderr and the Lambda functions' error log
 * write goes through `maskTokens` / `maskError`. Here, below every side, so that the CLI's `serve` and
 * lib/http share one pattern.
 */

// An API token's secret (lib/service/tokens.ts: `hns_` + 43 base62) as it may reach a log: whole, cut
// short or run on (a paste is not always exact), in any case, each character as itself or
// percent-encoded (`hns%5F…`, `%68%6E%73%5F…`), once or more (`%255F`). Hono decodes a path once
// (`decodeURI`), so a log may hold either form.
const enc = (hex: string) => `%(?:25)*${hex}`;
const TOKEN_IN_TEXT = new RegExp(
  `(?:h|${enc('68')})(?:n|${enc('6E')})(?:s|${enc('73')})(?:_|${enc('5F')})` +
    `(?:[0-9A-Z]|${enc('(?:3[0-9]|4[1-9A-F]|5[0-9A]|6[1-9A-F]|7[0-9A])')})+`,
  'gi',
);

/** What a masked token reads as. */
export const MASKED_TOKEN = 'hns_***';

/**
 * `text` with every `hns_` token secret in it (plain or percent-encoded) replaced by `hns_***`.
 * @example maskTokens('DELETE /v1/tokens/hns_abc 404 1 ms') // 'DELETE /v1/tokens/hns_*** 404 1 ms'
 */
export function maskTokens(text: string): string {
  return text.replace(TOKEN_IN_TEXT, MASKED_TOKEN);
}

/**
 * `err` with tokens masked for a log: an Error whose message or stack holds one becomes a copy (same
 * name, masked message and stack); a string is masked; anything else is returned as it is.
 */
export function maskError(err: unknown): unknown {
  if (typeof err === 'string') return maskTokens(err);
  if (!(err instanceof Error)) return err;
  const message = maskTokens(err.message);
  const stack = err.stack === undefined ? undefined : maskTokens(err.stack);
  if (message === err.message && stack === err.stack) return err;
  const copy = new Error(message);
  copy.name = err.name;
  copy.stack = stack;
  return copy;
}
