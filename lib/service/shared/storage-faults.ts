/**
 * Storage failures as answers (issue 8; docs/operations.md says what each means for an operator):
 *
 * | what the store says                       | code                        | status |
 * |-------------------------------------------|-----------------------------|--------|
 * | disk full: ENOSPC, EDQUOT, SQLITE_FULL     | `insufficient_storage`      | 507    |
 * | read-only: EROFS, SQLITE_READONLY*         | `storage_read_only`         | 503    |
 * | permission: EACCES, EPERM, SQLITE_PERM     | `storage_permission_denied` | 500    |
 * | layout: ENOTDIR, EISDIR, not a file        | `storage_layout`            | 500    |
 * | acknowledged bytes gone                    | `data_loss`                 | 500    |
 *
 * 507 says "try again once there is room" (RFC 4918 §11.5); 503 that the server cannot take writes until
 * its operator makes the storage writable (reads still work); 500 for the three the client can do
 * nothing about. The messages never name a path: the server's log has the detail.
 */
import type { SegmentKey } from '../../store/index.js';
import {
  type ByteRange,
  errorCode,
  SegmentDataLossError,
  StorageFaultError,
  type StorageFaultKind,
  storageFaultKind,
} from '../../store/index.js';
import { AppError } from './errors.js';

/**
 * Whether `err` is a refusal of the storage as the OS or SQLite report it (full, read-only, not ours,
 * laid out wrong; lib/store/errors.ts `storageFaultKind`): a best-effort write, such as a token's last
 * use, may drop it (issue 8).
 */
export function isStorageFault(err: unknown): boolean {
  return storageFaultKind(err) !== null;
}

/**
 * The errno or SQLite code of a storage answer's cause (`ENOSPC`, `SQLITE_FULL`), for the server's log,
 * or null when the cause carries none.
 */
export function storageFaultCode(cause: unknown): string | null {
  return errorCode(cause);
}

/**
 * The answer to a storage failure, or null when `err` is none (then it is a plain 500).
 * @param what what was not stored, for the message ("this chunk"; default "this request")
 * @param details more details for a program (ingest adds `expected_offset`)
 */
export function storageAppError(
  err: unknown,
  what = 'this request',
  details: Record<string, unknown> = {},
): AppError | null {
  if (err instanceof SegmentDataLossError) return dataLossError(err.key, err.range, err);
  const kind: StorageFaultKind | null = err instanceof StorageFaultError ? err.kind : storageFaultKind(err);
  if (kind === null) return null;
  const cause = { cause: err };
  switch (kind) {
    case 'full':
      return new AppError(
        'insufficient_storage',
        `the server's disk is full: nothing of ${what} was stored. Send it again later; if this goes on, tell the operator of this server`,
        details,
        cause,
      );
    case 'read_only':
      return new AppError(
        'storage_read_only',
        `the server's storage is read-only: nothing of ${what} was stored. Reading still works; tell the operator of this server, who must make its data directory writable again`,
        details,
        cause,
      );
    case 'permission':
      return new AppError(
        'storage_permission_denied',
        `the server may not write to its data directory (permission denied): nothing of ${what} was stored. Tell the operator of this server, who must fix the permissions of its data directory`,
        details,
        cause,
      );
    case 'layout':
      return new AppError(
        'storage_layout',
        `the server's data directory holds a file where a segment folder should be, or a folder where a segment file should be: nothing of ${what} was read or stored. Tell the operator of this server (docs/operations.md, storage_layout)`,
        details,
        cause,
      );
  }
}

/**
 * The 500 `data_loss` for a writer's segment that holds less than its index: `details` `{w, range}`.
 * Every read of the segment answers it (writer, segment, replay, inspect); verify reports it instead.
 * The cause (by default a `SegmentDataLossError` of `key`) names tenant, session and writer in the
 * server's log, where the operator looks for the file.
 */
export function dataLossError(key: SegmentKey, range: ByteRange, cause?: unknown): AppError {
  return new AppError(
    'data_loss',
    `the server has lost bytes [${range.start}, ${range.end}) of writer ${key.w}'s segment: it acknowledged them, but its storage no longer holds them. Tell the operator of this server (verify lists every loss of the session)`,
    { w: key.w, range: { start: range.start, end: range.end } },
    { cause: cause ?? new SegmentDataLossError(key, range) },
  );
}
