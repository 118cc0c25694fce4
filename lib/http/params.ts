/**
 * Path and query parameters, checked with zod before anything reaches a verb or a store (DESIGN §3: a
 * path id that is not `^[swtmae]_<ULID>$` of the right prefix is refused). A route declares them
 * (./route.ts): `OpenAPIHono` validates with these schemas and the OpenAPI document describes the
 * parameters from the same ones. And the request bodies, read within a bound.
 */
import type { Context } from 'hono';
import { z } from 'zod';
import { SessionId, TokenId, WriterId } from '../contract/ids.js';
import { AppError } from '../service/shared/errors.js';
import { incomingOf, readIncoming } from './node-body.js';

export { SessionId, TokenId, WriterId };

/** `{sid}` of a route's path. */
export const SessionPath = z.object({ sid: SessionId });
/** `{sid}` and `{w}` of a route's path. */
export const WriterPath = z.object({ sid: SessionId, w: WriterId });

// Digits only: `z.coerce` would read '', ' 0', '0x0' and '1e3' as numbers.
/** `?offset=N` of a chunk: the byte offset of the body's first byte in the writer's segment (required). */
export const Offset = z
  // A missing offset is named as such: "the query parameter offset is required: the byte offset of the chunk".
  .string({ error: (issue) => (issue.input === undefined ? 'the byte offset of the chunk' : undefined) })
  .regex(/^\d{1,16}$/, 'a byte offset is a non-negative decimal integer')
  .transform(Number)
  .pipe(z.number().int().max(Number.MAX_SAFE_INTEGER))
  .describe(
    "the byte offset of the body's first byte in the writer's segment: the stored length to append, " +
      'or an earlier offset to retry an accepted chunk',
  );
/** `?limit=` of a listing. */
// Digits only, as for offsets: `z.coerce` would read '0x10' as 16 and ' 5' as 5.
export const Limit = z
  .string()
  .regex(/^\d{1,3}$/, 'a limit is a whole number from 1 to 200')
  .transform(Number)
  .pipe(z.number().int().min(1).max(200))
  .optional()
  .transform((v) => v ?? 50)
  .describe('how many sessions to answer, 1 to 200 (default 50)');
/** `?limit=` of the board (`GET /v1/board`, `GET /`): a listing's, with the board's page of 100 by default. */
export const BoardLimit = z
  .string()
  .regex(/^\d{1,3}$/, 'a limit is a whole number from 1 to 200')
  .transform(Number)
  .pipe(z.number().int().min(1).max(200))
  .optional()
  .transform((v) => v ?? 100)
  .describe('how many sessions on a page, 1 to 200 (default 100)');
/** `?cursor=` of a listing: the `next` of the previous page, as given. */
export const Cursor = z
  .string()
  .optional()
  .describe('the `next` of the previous page, to read the page after it; omit for the first page');
/** `?format=` of a replay. */
export const Format = z
  .enum(['ndjson', 'text'])
  .default('ndjson')
  .describe('ndjson: one JSON event per line; text: one readable line per event');
/** A boolean query flag such as `?raw=1`: `1`/`true` on, `0`/`false`/absent off. */
export const Flag = z
  .enum(['0', '1', 'true', 'false'])
  .optional()
  .transform((v) => v === '1' || v === 'true');
/** `?raw=1` of a replay. */
export const Raw = Flag.describe(
  'raw=1: every stored line as written, in merged order, torn and malformed lines included and ' +
    'corrections not applied (scope read); the format is then always ndjson',
);

/** Largest JSON request body, in bytes (a status record is at most 256 KiB, DESIGN §7). */
export const MAX_JSON_BYTES = 256 * 1024;

/**
 * The request body, of which at most `limit + 1` bytes are read: a longer body is cut there (the caller
 * refuses it) and the rest is never buffered. The bytes read are kept for `c.req.text()` and the like.
 * On `@hono/node-server` the body is read from Node's request itself into one buffer (./node-body.ts).
 * @throws Error when the client goes away before the body ends
 */
export async function boundedBody(c: Context, limit: number): Promise<Uint8Array> {
  const req = c.req;
  const incoming = Object.keys(req.bodyCache).length === 0 ? incomingOf(c.env) : null;
  if (incoming) {
    const { bytes, cut } = await readIncoming(incoming, limit);
    if (cut) c.header('Connection', 'close');
    (req.bodyCache as Record<string, unknown>).arrayBuffer = Promise.resolve(bytes.buffer);
    return bytes;
  }
  const body = req.raw.body;
  if (!body || req.raw.bodyUsed || Object.keys(req.bodyCache).length > 0) {
    return new Uint8Array(await req.arrayBuffer());
  }
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  while (size <= limit) {
    const next = await reader.read();
    if (next.done) break;
    parts.push(next.value);
    size += next.value.length;
  }
  // Past the limit the rest is left unread (not cancelled: that would reset the connection before the
  // answer is written), and the connection is not reused: the client must not send its next request on
  // a connection that still carries the rest of this body.
  reader.releaseLock();
  if (size > limit) c.header('Connection', 'close');
  const bytes = new Uint8Array(Buffer.concat(parts, size).subarray(0, Math.min(size, limit + 1)));
  // Hono keeps promises in its body cache (its type says otherwise).
  (req.bodyCache as Record<string, unknown>).arrayBuffer = Promise.resolve(bytes.buffer);
  return bytes;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
/** A UTF-16 surrogate not in a pair (JSON can escape one, `"\ud800"`; no UTF-8 text holds one). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * The request body as JSON: UTF-8 text of at most `MAX_JSON_BYTES`, with no lone surrogate in any string
 * or key (a store could not keep it as sent). Duplicate keys: the last one wins, as in `JSON.parse`.
 * @throws AppError `payload_too_large` (413), `empty_body` or `invalid_body` (400)
 */
export async function jsonBody(c: Context, options: { emptyAs?: unknown } = {}): Promise<unknown> {
  const tooLarge = () =>
    new AppError('payload_too_large', `a JSON body may hold at most ${MAX_JSON_BYTES} bytes`, {
      max_bytes: MAX_JSON_BYTES,
    });
  if (Number(c.req.header('content-length')) > MAX_JSON_BYTES) {
    // answered unread: the connection, which still carries the body, is not reused
    c.header('Connection', 'close');
    throw tooLarge();
  }
  const bytes = await boundedBody(c, MAX_JSON_BYTES);
  if (bytes.length > MAX_JSON_BYTES) throw tooLarge();
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw new AppError('invalid_body', 'the request body is not valid UTF-8: send JSON in UTF-8');
  }
  if (text.trim() === '') {
    if ('emptyAs' in options) return options.emptyAs;
    throw new AppError('empty_body', 'the request body is empty: send a JSON object');
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw new AppError('invalid_body', 'the request body is not valid JSON');
  }
  if (hasLoneSurrogate(value)) {
    throw new AppError(
      'invalid_body',
      'the request body has a lone UTF-16 surrogate (such as "\\ud800") in a string: send valid Unicode',
    );
  }
  return value;
}

/** Whether any string or key of a parsed JSON value holds a lone surrogate (iterative: any depth). */
function hasLoneSurrogate(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return true;
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, item] of Object.entries(v)) {
        if (LONE_SURROGATE.test(k)) return true;
        stack.push(item);
      }
    }
  }
  return false;
}
