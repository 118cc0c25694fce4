/**
 * Prefixed ULID ids of the v3 log format (DESIGN §3).
 *
 * `s_` session, `w_` writer, `m_` message, `t_` turn, `a_` agent action, `e_` every other event.
 * The ULID part is 26 Crockford base32 characters; ids from one process are monotonic.
 */
import { monotonicFactory } from 'ulid';

export type IdPrefix = 's' | 'w' | 'm' | 't' | 'a' | 'e';

const ulid = monotonicFactory();

/** The pattern every id of the format matches: a one-letter prefix, `_`, a ULID. */
export const ID_PATTERN = /^[swtmae]_[0-9A-HJKMNP-TV-Z]{26}$/;

const PREFIX_PATTERNS: Record<IdPrefix, RegExp> = {
  s: /^s_[0-9A-HJKMNP-TV-Z]{26}$/,
  w: /^w_[0-9A-HJKMNP-TV-Z]{26}$/,
  m: /^m_[0-9A-HJKMNP-TV-Z]{26}$/,
  t: /^t_[0-9A-HJKMNP-TV-Z]{26}$/,
  a: /^a_[0-9A-HJKMNP-TV-Z]{26}$/,
  e: /^e_[0-9A-HJKMNP-TV-Z]{26}$/,
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
