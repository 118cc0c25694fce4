/**
 * A `DigestHead` as both state adapters store it (sqlite/digest-index.ts: table `digest_heads`;
 * dynamo/digest-index.ts: the session's `DIGEST` item): its fields as given, its writers as one JSON text
 * (no attribute names repeated per writer), read back the same way; and the conflict either throws when
 * the stored head is not the one a write expected.
 */
import type { DigestHead } from './digests.js';
import { StateConflictError } from './errors.js';

/** `head` as stored: its writers one JSON text (the `closed` flag as given: SQLite keeps it 0 or 1). */
export function encodeDigestHead(head: DigestHead): Omit<DigestHead, 'writers'> & { writers: string } {
  return {
    seq: head.seq,
    sha256: head.sha256,
    signature: head.signature,
    at: head.at,
    writers: JSON.stringify(head.writers),
    closed: head.closed,
    unchanged: head.unchanged,
    changed_at: head.changed_at,
  };
}

/** A head read back: the stored fields of `encodeDigestHead`, its writers' JSON text and `closed` as a boolean. */
export function decodeDigestHead(
  stored: Record<string, unknown>,
  writersJson: string,
  closed: boolean,
): DigestHead {
  return {
    seq: stored.seq as number,
    sha256: stored.sha256 as string,
    signature: stored.signature as string,
    at: stored.at as string,
    writers: JSON.parse(writersJson) as DigestHead['writers'],
    closed,
    unchanged: stored.unchanged as number,
    changed_at: stored.changed_at as string,
  };
}

/** The conflict of a head write: the stored head's seq is `seq` (null: none), not `prevSeq`. */
export function digestHeadConflict(
  sid: string,
  seq: number | null,
  prevSeq: number | null,
): StateConflictError {
  return new StateConflictError(
    `the newest digest of session ${sid} is ${seq === null ? 'none' : `seq ${seq}`}, not ${prevSeq ?? 'none'}`,
  );
}
