/**
 * Validation of the parts of storage keys (DESIGN §3, §5): keys and paths are built only from these.
 * Adapters check again what the routes already checked, so a bug upstream cannot become a traversal.
 * And the store's cursor of the session listing, the same for every adapter.
 */
import { isId } from '../log/format/ids.js';
import { InvalidCursorError } from './errors.js';
import type { SegmentKey } from './segments.js';

/**
 * Where the stored copies of large replays are in the segments bucket (issue 17.2,
 * lib/store/s3/replay-archive.ts), outside `tenants/`: copies, merged again on demand, expired by a
 * lifecycle rule (infra/storage.ts).
 */
export const REPLAY_PREFIX = 'replays/';
/** The suffix of a stored replay's build marker, whose creation starts the builder (infra/replays.ts). */
export const BUILD_MARKER_SUFFIX = '.building';

/** Tenant names: lower-case letters, digits and `-`, 1 to 63 characters, starting with a letter or digit. */
export const TENANT_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** True when `name` is a valid tenant name. */
export function isTenantName(name: unknown): name is string {
  return typeof name === 'string' && TENANT_PATTERN.test(name);
}

/** @throws TypeError when any part of the key is not a valid id */
export function assertSegmentKey(key: SegmentKey): void {
  if (!isTenantName(key.tenant))
    throw new TypeError(`invalid tenant in storage key: ${JSON.stringify(key.tenant)}`);
  if (!isId('s', key.sid))
    throw new TypeError(`invalid session id in storage key: ${JSON.stringify(key.sid)}`);
  if (!isId('w', key.w)) throw new TypeError(`invalid writer id in storage key: ${JSON.stringify(key.w)}`);
}

/**
 * The tenant and session id of a session-level key (its digests, issue 15).
 * @throws TypeError when either is not a valid tenant name or session id
 */
export function assertSessionKey(tenant: string, sid: string): void {
  if (!isTenantName(tenant)) throw new TypeError(`invalid tenant in storage key: ${JSON.stringify(tenant)}`);
  if (!isId('s', sid)) throw new TypeError(`invalid session id in storage key: ${JSON.stringify(sid)}`);
}

/** Largest digest seq a `{seq:09}` name can hold. */
export const MAX_DIGEST_SEQ = 999_999_999;

/**
 * The name of digest `seq` of a session: `{seq:09}.json`, e.g. `000000001.json` (issue 15, DESIGN §6b).
 * @throws RangeError for a seq that is not an integer from 1 to 999,999,999
 */
export function digestName(seq: number): string {
  if (!Number.isSafeInteger(seq) || seq < 1 || seq > MAX_DIGEST_SEQ) {
    throw new RangeError(`digest seq must be an integer from 1 to ${MAX_DIGEST_SEQ}, not ${seq}`);
  }
  return `${String(seq).padStart(9, '0')}.json`;
}

/** The seq a digest's name (`digestName`) stands for, or null for any other name. */
export function digestSeqOf(name: string): number | null {
  const m = /^(\d{9})\.json$/.exec(name);
  const seq = m ? Number(m[1]) : 0;
  return seq >= 1 ? seq : null;
}

/**
 * The store's cursor of the session listing: the position just after session `sid` updated at
 * `updatedAt`, as base64url of `[updatedAt, sid]`. Clients never see it bare: the service signs it
 * (lib/service/sessions/cursors.ts).
 */
export function encodeCursor(updatedAt: string, sid: string): string {
  return Buffer.from(JSON.stringify([updatedAt, sid])).toString('base64url');
}

/**
 * The position inside a cursor of `encodeCursor`, `[updatedAt, sid]`.
 * @throws InvalidCursorError for anything else (bounded, so that a forged cursor cannot make a key a
 *   backend refuses: DynamoDB sort keys hold 1 KiB)
 */
export function decodeCursor(cursor: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(v) &&
      v.length === 2 &&
      typeof v[0] === 'string' &&
      typeof v[1] === 'string' &&
      v[0].length > 0 &&
      v[0].length <= 64 &&
      v[1].length > 0 &&
      v[1].length <= 256
    ) {
      return [v[0], v[1]];
    }
  } catch {
    // fall through
  }
  throw new InvalidCursorError('invalid cursor');
}
