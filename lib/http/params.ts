/**
 * Path and query parameters, checked with zod before anything reaches a verb or a store (DESIGN §3: a
 * path id that is not `^[swtmae]_<ULID>$` of the right prefix is refused).
 */
import type { Context } from 'hono';
import { z } from 'zod';
import { AppError } from '../service/errors.js';

const ulid = '[0-9A-HJKMNP-TV-Z]{26}';
export const SessionId = z.string().regex(new RegExp(`^s_${ulid}$`), 'a session id is s_ followed by a ULID');
export const WriterId = z.string().regex(new RegExp(`^w_${ulid}$`), 'a writer id is w_ followed by a ULID');
export const TokenId = z.string().regex(new RegExp(`^tok_${ulid}$`), 'a token id is tok_ followed by a ULID');

/** The validated path parameter. @throws AppError `invalid_id` (400) */
export function pathParam<T>(c: Context, name: string, schema: z.ZodType<T>): T {
  const raw = c.req.param(name);
  const r = schema.safeParse(raw);
  if (!r.success) {
    throw new AppError(
      'invalid_id',
      `the ${name} in the path is not valid: ${r.error.issues[0]?.message ?? ''}`,
      {
        param: name,
      },
    );
  }
  return r.data;
}

/** A query parameter through a zod schema. @throws AppError `bad_request` (400) */
export function queryParam<T>(c: Context, name: string, schema: z.ZodType<T>): T {
  const r = schema.safeParse(c.req.query(name));
  if (!r.success) {
    throw new AppError(
      'bad_request',
      `the query parameter ${name} is not valid: ${r.error.issues[0]?.message ?? ''}`,
      {
        param: name,
      },
    );
  }
  return r.data;
}

/** The request body as JSON. @throws AppError `invalid_body` (400) for anything that is not JSON */
export async function jsonBody(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') throw new AppError('empty_body', 'the request body is empty: send a JSON object');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AppError('invalid_body', 'the request body is not valid JSON');
  }
}
