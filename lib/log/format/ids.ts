/**
 * Prefixed ULID ids of the v3 log format (DESIGN §3).
 *
 * `s_` session, `w_` writer, `m_` message, `t_` turn, `a_` agent action, `e_` every other event.
 * The ULID part is 26 Crockford base32 characters; ids from one process are monotonic.
 */
import { monotonicFactory } from 'ulid';

export type IdPrefix = 's' | 'w' | 'm' | 't' | 'a' | 'e';

const ulid = monotonicFactory();

/**
 * A ULID as regular-expression source, unanchored: 26 Crockford base32 characters (no I, L, O, U). The
 * one spelling of it that every id pattern (here, the API's id schemas, token ids) is built from.
 */
export const ULID_SOURCE = '[0-9A-HJKMNP-TV-Z]{26}';

/**
 * The whole-string pattern of an id with this prefix: `prefix_` then a ULID.
 * @example idPattern('s').test('s_01KZVVGRNTBMSD610TK2GA9BFS') // true; idPattern('tok') for token ids
 */
export function idPattern(prefix: string): RegExp {
  return new RegExp(`^${prefix}_${ULID_SOURCE}$`);
}

/** The pattern every id of the format matches: a one-letter prefix, `_`, a ULID. */
export const ID_PATTERN = new RegExp(`^[swtmae]_${ULID_SOURCE}$`);

const PREFIX_PATTERNS: Record<IdPrefix, RegExp> = {
  s: idPattern('s'),
  w: idPattern('w'),
  m: idPattern('m'),
  t: idPattern('t'),
  a: idPattern('a'),
  e: idPattern('e'),
};

/**
 * A new id with the given prefix, e.g. `newId('m')` → `m_01KZVVGRNTBMSD610TK2GA9BFS`.
 * @param seedTime optional time in ms since the epoch for the ULID's time part (imports use the source's time).
 */
export function newId(prefix: IdPrefix, seedTime?: number): string {
  return `${prefix}_${ulid(seedTime)}`;
}

/** True when `value` is an id with exactly this prefix (safe to use in a storage key or path). */
export function isId(prefix: IdPrefix, value: unknown): value is string {
  return typeof value === 'string' && PREFIX_PATTERNS[prefix].test(value);
}

/** A new session id `s_…`. */
export const newSessionId = (): string => newId('s');
/** A new writer id `w_…`. */
export const newWriterId = (): string => newId('w');
