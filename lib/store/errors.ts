/**
 * The store's errors. A conditional write lost (`StateConflictError`), other bytes at a chunk's offset
 * (`ChunkConflictError`), a cursor this store did not make (`InvalidCursorError`); and typed storage
 * failures (issue 8, "never acknowledge what is not stored"): what an adapter throws when
 * its medium refuses a write (disk full, read-only, permission denied) or no longer holds bytes the index
 * says were accepted (data loss), or whose data directory holds the wrong kind of entry (layout).
 * `lib/service/shared/storage-faults.ts` turns them into the answers docs/operations.md explains: 507
 * `insufficient_storage`, 503 `storage_read_only`, 500 `storage_permission_denied`, 500
 * `storage_layout`, 500 `data_loss`.
 */
import type { ByteRange, SegmentKey } from './segments.js';

/**
 * What kind of refusal: the medium is full, mounted read-only, not ours to write, or laid out wrong (a
 * file where a folder of the data directory should be, or a folder where a segment file should be).
 */
export type StorageFaultKind = 'full' | 'read_only' | 'permission' | 'layout';

/** A conditional write lost: the record is not in the state the caller read. */
export class StateConflictError extends Error {
  override name = 'StateConflictError';
  constructor(
    message: string,
    /** for writer advances: the length actually stored */
    readonly currentLength?: number,
  ) {
    super(message);
  }
}

/** A tenant has as many of a thing as it may (alert targets): the new one was not written. */
export class LimitReachedError extends Error {
  override name = 'LimitReachedError';
  constructor(
    message: string,
    readonly limit: number,
  ) {
    super(message);
  }
}

/** Other bytes are already stored at this offset of the segment. */
export class ChunkConflictError extends Error {
  override name = 'ChunkConflictError';
}

/** A listing cursor this store did not make. */
export class InvalidCursorError extends Error {
  override name = 'InvalidCursorError';
}

/**
 * The storage refused a write. Nothing of the request is stored (the adapter rolled back what it had
 * written). `code` is the errno or SQLite code, `where` names the store for the server's log (never a
 * tenant's ids: those stay out of log lines).
 */
export class StorageFaultError extends Error {
  override name = 'StorageFaultError';
  constructor(
    readonly kind: StorageFaultKind,
    readonly code: string,
    readonly where: string,
    options?: { cause?: unknown },
  ) {
    super(`${where}: ${code}`, options);
  }
}

/**
 * A segment holds fewer bytes than its index says were accepted: `range` of it is gone. Thrown before
 * anything of the segment is read (a reader checks the length first), or when the bytes run out while
 * reading (the file was cut behind the server's back).
 */
export class SegmentDataLossError extends Error {
  override name = 'SegmentDataLossError';
  /** @param options.where the segment as the store names it (its folder, its key prefix), for the message */
  constructor(
    readonly key: SegmentKey,
    readonly range: ByteRange,
    options: { cause?: unknown; where?: string } = {},
  ) {
    super(
      `segment ${options.where ?? `${key.tenant}/${key.sid}/${key.w}`} is missing bytes [${range.start}, ${range.end})`,
      options.cause === undefined ? {} : { cause: options.cause },
    );
  }
}

/**
 * The kind of storage refusal an error from the OS or SQLite is, or null for any other error: ENOSPC,
 * EDQUOT and SQLITE_FULL are `full`; EROFS and SQLITE_READONLY* `read_only`; EACCES, EPERM and
 * SQLITE_PERM `permission`; ENOTDIR and EISDIR `layout`.
 */
export function storageFaultKind(err: unknown): StorageFaultKind | null {
  const code = errorCode(err);
  if (code === null) return null;
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL') return 'full';
  if (code === 'EROFS' || code.startsWith('SQLITE_READONLY')) return 'read_only';
  if (code === 'EACCES' || code === 'EPERM' || code === 'SQLITE_PERM') return 'permission';
  if (code === 'ENOTDIR' || code === 'EISDIR') return 'layout';
  return null;
}

/** The `code` of a Node system error or a better-sqlite3 `SqliteError`, or null. */
export function errorCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}
