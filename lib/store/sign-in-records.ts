/**
 * What both adapters of the sign-in port (issue 29, ./sign-in.ts; lib/store/sqlite/sign-in.ts,
 * lib/store/dynamo/sign-in.ts) share: the cursors of `listPeople` and `listAudit`, which name the tenant and
 * the listing they were made for, so that a cursor of another tenant or listing is refused rather than
 * read as a position; and reading a stored record back through the port's schema (`storedRecord` for a
 * `get…`, which throws on a damaged record; `listedRecord` for a listing, which leaves it out).
 */
import type { z } from 'zod';
import { InvalidCursorError } from './errors.js';

/** The listings of the port that page. */
export type SignInListing = 'people' | 'audit';

/** The longest position a cursor holds: an email (254 characters) or an audit id (29). */
const MAX_POSITION = 256;

/**
 * The cursor just after `position` (the last email or audit id of a page) of `listing` of `tenant`:
 * base64url of `[listing, tenant, position]`. Clients never see it bare: the service signs it.
 */
export function encodeSignInCursor(listing: SignInListing, tenant: string, position: string): string {
  return Buffer.from(JSON.stringify([listing, tenant, position])).toString('base64url');
}

/**
 * The position inside a cursor of `encodeSignInCursor` made for `listing` of `tenant`.
 * @throws InvalidCursorError for anything else: not such a cursor, another tenant's, another listing's
 */
export function decodeSignInCursor(listing: SignInListing, tenant: string, cursor: string): string {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError('invalid cursor');
  }
  if (
    !Array.isArray(v) ||
    v.length !== 3 ||
    v[0] !== listing ||
    typeof v[2] !== 'string' ||
    v[2].length === 0 ||
    v[2].length > MAX_POSITION
  ) {
    throw new InvalidCursorError('invalid cursor');
  }
  if (v[1] !== tenant) throw new InvalidCursorError('the cursor is not of this tenant');
  return v[2];
}

/** A stored sign-in record that does not parse as its schema (a damaged row or item, a hand edit). */
export class DamagedRecordError extends Error {
  override name = 'DamagedRecordError';
}

/**
 * `json` (a stored JSON text) as `schema`'s record.
 * @param what names the record for the message, e.g. `person priya@example.com of tenant acme`
 * @throws DamagedRecordError when it is not JSON or not such a record
 */
export function storedRecord<T>(schema: z.ZodType<T>, json: unknown, what: string): T {
  if (typeof json !== 'string') throw new DamagedRecordError(`the stored ${what} is missing its record`);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new DamagedRecordError(`the stored ${what} is not JSON`);
  }
  const r = schema.safeParse(value);
  if (!r.success) {
    const first = r.error.issues[0];
    const where = first?.path.length ? ` at ${first.path.join('.')}` : '';
    throw new DamagedRecordError(`the stored ${what} does not parse${where}: ${first?.message ?? 'invalid'}`);
  }
  return r.data;
}

/** `json` as `schema`'s record, or null when it does not parse: a listing leaves it out. */
export function listedRecord<T>(schema: z.ZodType<T>, json: unknown): T | null {
  try {
    return storedRecord(schema, json, 'record');
  } catch (err) {
    if (err instanceof DamagedRecordError) return null;
    throw err;
  }
}

/**
 * The check of `putPerson`'s arguments both adapters make before writing: `person.version` must be
 * `expected + 1` (1 when `expected` is null).
 * @throws RangeError when it is not (a caller's mistake, not a conflict)
 */
export function assertNextVersion(version: number, expected: number | null): void {
  if (version !== (expected ?? 0) + 1) {
    throw new RangeError(
      `a person record written over version ${expected ?? 'none'} must have version ${(expected ?? 0) + 1}, not ${version}`,
    );
  }
}

/**
 * `limit` checked: an integer from 1 to 1000, as the port says.
 * @throws RangeError for anything else
 */
export function pageLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new RangeError(`a page holds 1 to 1000 records, not ${limit}`);
  }
  return limit;
}
