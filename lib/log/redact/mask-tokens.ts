/**
 * `hns_` token secrets masked in text for a log (issue 24 item 6, DESIGN §4 "no token in logs"): what the
 * server's request log, its error lines, the local server's stderr and the Lambda functions' error log
 * write goes through `maskTokens` / `maskError`. Here, below every side, so that the CLI's `serve` and
 * lib/http share one pattern.
 */

// An API token's secret (lib/service/tokens/create.ts: `hns_` + 43 base62) as it may reach a log: whole, cut
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
 * `err` with every `hns_` token masked for a log, all of it that a logger may write (the trial of issue
 * 24, item 13: Powertools Logger writes an error's `cause`, recursively, and its own properties, not only
 * its message and stack): a string is masked; an Error becomes a copy (same prototype, so its name and
 * class hold) whose message, stack, `cause` chain, `errors` (AggregateError) and own properties are
 * masked, each nested value as `maskError` would; an array or object is copied with each value masked;
 * binary data (a Buffer, a typed array) reads as `<N bytes>` (a token in it would be written as numbers).
 * Anything holding no token is returned as it is (the same object). Cycles read `[Circular]`; past 8
 * levels a value reads `[…]`.
 */
export function maskError(err: unknown): unknown {
  return holdsToken(err, 0, new WeakSet()) ? maskValue(err, 0, new WeakSet()) : err;
}

/** Whether a string anywhere in `value` (as `maskValue` walks it) holds a token. */
function holdsToken(value: unknown, depth: number, seen: WeakSet<object>): boolean {
  if (typeof value === 'string') return maskTokens(value) !== value;
  if (typeof value !== 'object' || value === null || seen.has(value)) return false;
  // Deeper than `maskValue` goes: it is cut there (`[…]`), so the copy is needed.
  if (depth >= MAX_DEPTH) return true;
  seen.add(value);
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return true;
  return propertiesOf(value).some(([, v]) => holdsToken(v, depth + 1, seen));
}

const MAX_DEPTH = 8;

function maskValue(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return maskTokens(value);
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[…]';
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return `<${value.byteLength} bytes>`;
  seen.add(value);
  const out = Array.isArray(value) ? maskArray(value, depth, seen) : maskObject(value, depth, seen);
  return out;
}

function maskArray(value: unknown[], depth: number, seen: WeakSet<object>): unknown[] {
  return value.map((v) => maskValue(v, depth + 1, seen));
}

/**
 * The properties a logger may write of `value`, read once each (a getter that throws reads
 * `[unreadable]`): an Error's own ones, enumerable or not (`message`, `stack`, `errors` …), and its
 * `cause` (Powertools reads `error.cause`); another object's own enumerable ones.
 */
function propertiesOf(value: object): [key: string, value: unknown, enumerable: boolean][] {
  const isError = value instanceof Error;
  const props = Object.getOwnPropertyDescriptors(value);
  const keys = Object.keys(props).filter((k) => isError || props[k]!.enumerable === true);
  if (isError && !keys.includes('cause') && 'cause' in value) keys.push('cause');
  return keys.map((k) => {
    let v: unknown;
    try {
      v = (value as Record<string, unknown>)[k];
    } catch {
      v = '[unreadable]';
    }
    return [k, v, props[k]?.enumerable ?? false];
  });
}

/**
 * A copy of `value` with each property of `propertiesOf` masked: an Error as a native Error with its
 * prototype and each property's enumerability, another object as a plain object.
 */
function maskObject(value: object, depth: number, seen: WeakSet<object>): object {
  const copy: Record<string, unknown> = value instanceof Error ? errorLike(value) : {};
  for (const [k, v, enumerable] of propertiesOf(value)) {
    Object.defineProperty(copy, k, {
      value: maskValue(v, depth + 1, seen),
      enumerable,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

/** A native Error (what util.inspect and loggers recognise) with `like`'s prototype, no own property. */
function errorLike(like: object): Record<string, unknown> {
  const e = new Error();
  Object.setPrototypeOf(e, Object.getPrototypeOf(like));
  delete (e as { stack?: string }).stack;
  return e as unknown as Record<string, unknown>;
}
