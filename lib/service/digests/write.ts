/**
 * Signed session digests (issue 15.2, DESIGN §6b), CloudTrail's digest files made for sessions: each
 * lists the chunks accepted since the previous digest with their SHA-256, every writer's length and
 * chained digest, the previous digest's hash and signature, and when the next one is due at the latest.
 * One is written when a session is due (`StateStore.listDigestsDue`: a writer's first chunk or end, the
 * cadence of lib/service/shared/audit-config.ts, also when nothing changed) and for an export.
 *
 * The order of writes makes a chain without forks: the digest object is stored create-only at seq n+1
 * (`DigestStore.putDigest`), then the head moves from n to n+1 under a condition (`putDigestHead`). Of
 * two writers, one stores seq n+1 and the other gets a conflict; a crash between the two writes leaves an
 * object the head does not name yet, which the next write adopts (it chains from the head) rather than
 * failing at that seq forever.
 */

import { canonicalJson, digestHash, GENESIS_CHAIN } from '../../audit/chain.js';
import {
  DIGEST_FORMAT,
  type DigestChunk,
  type DigestReason,
  type DigestRecord,
  type DigestWriter,
  SIGNATURE_ALGORITHM,
  SignedDigest,
} from '../../audit/schemas.js';
import { signDigest } from '../../audit/signature.js';
import {
  DigestConflictError,
  type DigestHead,
  StateConflictError,
  type WriterRecord,
} from '../../store/index.js';
import { noteDamage } from '../alerts/crossings.js';
import { chunksBetween } from '../ingest/chain.js';
import { nextInterval, resolveAudit } from '../shared/audit-config.js';
import { AppError } from '../shared/errors.js';
import type { DigestDeps } from './deps.js';

export type { DigestDeps } from './deps.js';
export { digestDeps } from './deps.js';

/** A digest this call wrote: the session's new head, the signed record, and the bytes stored. */
export interface WrittenDigest {
  head: DigestHead;
  digest: SignedDigest;
  /** `canonicalJson(digest)` as UTF-8: the stored object, byte for byte */
  bytes: Uint8Array;
}

/** How many times one call may adopt a digest left by a crash before it writes its own. */
const MAX_ADOPTIONS = 3;

/**
 * Writes the session's next signed digest: every chunk indexed since its head (by writer, then offset),
 * every writer's length and chain, `previous` = the head's seq, hash and signature, `next_due` per the
 * cadence (null when every writer has ended, or nothing changed for `idleCloseSeconds`). A digest is
 * written also when nothing changed (chunks []), so a missing one is visible.
 * @param reason `scheduled`, `writer_end` (a writer ended since the head) or `export` (D's export route:
 *   the bundle's head digest, covering every byte exported)
 * @returns the digest written, or null when another process wrote this seq first (the chain it wrote is
 *   the session's; read the head again) or the session does not exist
 * @throws AppError `signing_unavailable` (503) when the signer cannot sign (KMS denied or unreachable):
 *   nothing was stored and the head is unchanged; `storage_layout` (500) when the index cannot account for
 *   a writer's bytes; the digest store's and state store's errors
 */
export async function writeDigest(
  deps: DigestDeps,
  tenant: string,
  sid: string,
  reason: DigestReason,
): Promise<WrittenDigest | null> {
  const r = await writeNext(deps, tenant, sid, () => reason);
  return r && 'kept' in r ? null : r;
}

/** What `writeExportDigest` answers: the session's head, and whether this call signed it. */
export interface ExportHeadWrite {
  head: DigestHead;
  /** true: written by this call; false: the head already covered the session and is young */
  fresh: boolean;
}

/**
 * Writes an `export` digest of session `sid` only when it adds something (issue 15 attack
 * digests-post-flood): the session has no digest, or changed since its head (a writer's indexed length or
 * end differs from the head's, or a writer was added), or the head is older than `exportMinAgeSeconds`
 * (lib/service/shared/audit-config.ts). Otherwise the head is answered as it is, so a read token cannot make
 * the server store digests without bound; concurrent callers race for one seq, so one change makes at
 * most one digest. The check reads the same head and writers the write does, after adopting an orphan.
 * @returns the head, `fresh` when written by this call; null as `writeDigest` (another process wrote
 *   this seq first, or the session does not exist)
 * @throws AppError as `writeDigest`
 */
export async function writeExportDigest(
  deps: DigestDeps,
  tenant: string,
  sid: string,
): Promise<ExportHeadWrite | null> {
  const minAgeMs = resolveAudit(deps.audit).exportMinAgeSeconds * 1000;
  const keep = (head: DigestHead, writers: WriterRecord[]) =>
    deps.now().getTime() - Date.parse(head.at) < minAgeMs && covers(head, writers);
  const r = await writeNext(deps, tenant, sid, () => 'export', keep);
  if (!r) return null;
  return 'kept' in r ? { head: r.kept, fresh: false } : { head: r.head, fresh: true };
}

/** True when `head` attests every writer as it is now: the same writers, lengths and ends. */
function covers(head: DigestHead, writers: WriterRecord[]): boolean {
  if (writers.length !== head.writers.length) return false;
  const attested = new Map(head.writers.map((w) => [w.w, w]));
  return writers.every((w) => {
    const a = attested.get(w.w);
    return a !== undefined && a.length === w.length && a.ended === w.ended;
  });
}

/** Counts of one `writeDueDigests` pass. */
export interface DueDigestsResult {
  /** sessions listed as due */
  due: number;
  /** digests written */
  written: number;
  /** sessions another process attested first (or that no longer exist), or deferred (`DuePassHooks.defer`) */
  skipped: number;
  /** sessions whose digest failed (logged; they stay due and are tried at the next pass) */
  failed: number;
}

/** What a long-running digester learns from a pass, and how it holds back sessions that keep failing. */
export interface DuePassHooks {
  /** true: leave this due session for a later pass (counted as skipped) */
  defer?: (tenant: string, sid: string) => boolean;
  /** the session's digest failed (already logged) or was written */
  settled?: (tenant: string, sid: string, ok: boolean) => void;
}

/**
 * One pass of the digester (the `hansard serve` loop, the AWS scheduled function): a digest for each
 * session due at `now`, at most `limit`, earliest due first: `writer_end` when a writer ended since the
 * session's head, else `scheduled`. A session that fails is logged (one line: tenant, sid, message) and
 * does not stop the others.
 */
export async function writeDueDigests(
  deps: DigestDeps,
  now: Date,
  limit: number,
  hooks: DuePassHooks = {},
): Promise<DueDigestsResult> {
  const log = deps.log ?? ((line: string) => console.error(line));
  const due = await deps.state.listDigestsDue(now.toISOString(), limit);
  const result: DueDigestsResult = { due: due.length, written: 0, skipped: 0, failed: 0 };
  for (const { tenant, sid } of due) {
    if (hooks.defer?.(tenant, sid)) {
      result.skipped += 1;
      continue;
    }
    try {
      const written = await writeNext(deps, tenant, sid, dueReason);
      if (written && !('kept' in written)) result.written += 1;
      else result.skipped += 1;
      hooks.settled?.(tenant, sid, true);
    } catch (err) {
      result.failed += 1;
      log(`hansard: digest of session ${sid} (tenant ${tenant}) not written: ${messageOf(err)}`);
      hooks.settled?.(tenant, sid, false);
    }
  }
  return result;
}

/** `writer_end` when a writer has ended since the head (or with the first digest), else `scheduled`. */
function dueReason(head: DigestHead | null, writers: WriterRecord[]): DigestReason {
  const endedBefore = new Set((head?.writers ?? []).filter((w) => w.ended).map((w) => w.w));
  return writers.some((w) => w.ended && !endedBefore.has(w.w)) ? 'writer_end' : 'scheduled';
}

async function writeNext(
  deps: DigestDeps,
  tenant: string,
  sid: string,
  reasonOf: (head: DigestHead | null, writers: WriterRecord[]) => DigestReason,
  /** true: the head stands, nothing is written (`writeExportDigest`) */
  keep?: (head: DigestHead, writers: WriterRecord[]) => boolean,
): Promise<WrittenDigest | { kept: DigestHead } | null> {
  for (let adopted = 0; ; adopted++) {
    // The session's bytes first: a chunk indexed after this read and listed below makes putDigestHead
    // mark the session due again (a spare digest), never the reverse (a chunk left unattested).
    const session = await deps.state.getSession(tenant, sid);
    if (!session) return null;
    const head = await deps.state.getDigestHead(tenant, sid);
    const seq = (head?.seq ?? 0) + 1;
    const orphan = await deps.digests.getDigest(tenant, sid, seq);
    if (orphan) {
      // Stored by a process that stopped before it moved the head (or is moving it now).
      if (adopted >= MAX_ADOPTIONS) return null;
      if (!(await adopt(deps, tenant, sid, head, seq, orphan))) return null;
      continue;
    }
    const writers = (await deps.state.listWriters(tenant, sid)).sort(byW);
    if (head && keep?.(head, writers)) return { kept: head };
    const { chunks, states } = await changesSince(deps, tenant, sid, head, writers);
    const record = nextRecord(deps, tenant, sid, seq, head, chunks, states, reasonOf(head, writers));
    const signed = await sign(deps, record, sid);
    const bytes = new TextEncoder().encode(canonicalJson(signed));
    try {
      await deps.digests.putDigest(tenant, sid, seq, bytes);
    } catch (err) {
      if (err instanceof DigestConflictError) return null;
      throw err;
    }
    const newHead = headOf(signed, head);
    try {
      await deps.state.putDigestHead(tenant, sid, head?.seq ?? null, newHead, signed.next_due, session.bytes);
    } catch (err) {
      // Another process stored the same bytes at this seq (same instant, same key: Ed25519 is
      // deterministic) and moved the head first: the chain is the same.
      if (err instanceof StateConflictError) return null;
      throw err;
    }
    return { head: newHead, digest: signed, bytes };
  }
}

/**
 * Makes the digest stored at `seq` (no head names it: its writer stopped between its two writes) the
 * head, when it follows the head. Its writers' total length stands for the session's bytes then, so a
 * chunk indexed after it leaves the session due.
 * @returns false when another process moved the head meanwhile
 * @throws Error when the stored object is not a digest that follows the head (a fork: the operator must look)
 */
async function adopt(
  deps: DigestDeps,
  tenant: string,
  sid: string,
  head: DigestHead | null,
  seq: number,
  bytes: Uint8Array,
): Promise<boolean> {
  let digest: SignedDigest;
  try {
    digest = SignedDigest.parse(JSON.parse(new TextDecoder().decode(bytes)));
  } catch {
    const detail = `digest ${seq} of session ${sid} is stored but is not a valid digest record`;
    await noteDigestDamage(deps, tenant, sid, seq, detail);
    throw new Error(detail);
  }
  const follows =
    digest.seq === seq &&
    digest.tenant === tenant &&
    digest.sid === sid &&
    (head === null
      ? digest.previous === null
      : digest.previous?.seq === head.seq &&
        digest.previous.sha256 === head.sha256 &&
        digest.previous.signature === head.signature);
  if (!follows) {
    const detail = `digest ${seq} of session ${sid} is stored but does not follow digest ${head?.seq ?? 'none'} (the head): the chain is forked, see docs/operations.md`;
    await noteDigestDamage(deps, tenant, sid, seq, detail);
    throw new Error(detail);
  }
  const bytesThen = digest.writers.reduce((n, w) => n + w.length, 0);
  // The crashed write may not have synced it: the same bytes again make it durable before the head names it.
  await deps.digests.putDigest(tenant, sid, seq, bytes);
  try {
    await deps.state.putDigestHead(
      tenant,
      sid,
      head?.seq ?? null,
      headOf(digest, head),
      digest.next_due,
      bytesThen,
    );
  } catch (err) {
    if (err instanceof StateConflictError) return false;
    throw err;
  }
  return true;
}

/** `record.damaged` for a broken digest chain at `seq` (issue 28), once per seq; never throws. */
function noteDigestDamage(deps: DigestDeps, tenant: string, sid: string, seq: number, detail: string) {
  const at = (deps.now?.() ?? new Date()).toISOString();
  return noteDamage(
    deps.state,
    tenant,
    { sid, w: null, what: 'digest_fork', detail, key: `digest:${seq}` },
    at,
  );
}

/** The writers' states now and the chunks each indexed since the head, checked against their chains. */
async function changesSince(
  deps: DigestDeps,
  tenant: string,
  sid: string,
  head: DigestHead | null,
  writers: WriterRecord[],
): Promise<{ chunks: DigestChunk[]; states: DigestWriter[] }> {
  const before = new Map((head?.writers ?? []).map((w) => [w.w, w]));
  const chunks: DigestChunk[] = [];
  const states: DigestWriter[] = [];
  for (const w of writers) {
    const prev = before.get(w.w);
    const from = prev?.length ?? 0;
    if (w.length < from) {
      throw new AppError(
        'storage_layout',
        `writer ${w.w} of session ${sid} holds ${w.length} bytes in the index but digest ${head?.seq} attested ${from}: the index went back, see docs/operations.md`,
        { w: w.w },
      );
    }
    // Bounded by the length read with the writer: a chunk indexed since is the next digest's.
    const since = await chunksBetween(
      deps.state,
      tenant,
      sid,
      w.w,
      from,
      prev?.chain ?? GENESIS_CHAIN,
      w.length,
    );
    if (w.chain !== null && w.chain !== since.chain) {
      throw new AppError(
        'storage_layout',
        `writer ${w.w} of session ${sid}: its chained digest in the index does not match its chunk records, see docs/operations.md`,
        { w: w.w },
      );
    }
    for (const c of since.chunks)
      chunks.push({ w: w.w, offset: c.offset, length: c.length, sha256: c.sha256 });
    states.push({ w: w.w, length: w.length, lines: w.lines, chain: since.chain, ended: w.ended });
  }
  return { chunks, states };
}

/** The unsigned record of digest `seq`, its `next_due` from the cadence. */
function nextRecord(
  deps: DigestDeps,
  tenant: string,
  sid: string,
  seq: number,
  head: DigestHead | null,
  chunks: DigestChunk[],
  writers: DigestWriter[],
  reason: DigestReason,
): Omit<DigestRecord, 'key_id'> {
  const config = resolveAudit(deps.audit);
  const now = deps.now();
  const at = now.toISOString();
  const unchanged = chunks.length > 0 ? 0 : (head?.unchanged ?? 0) + 1;
  const changedAt = chunks.length > 0 ? at : (head?.changed_at ?? at);
  const allEnded = writers.length > 0 && writers.every((w) => w.ended);
  const idle = now.getTime() - Date.parse(changedAt) >= config.idleCloseSeconds * 1000;
  const nextDue =
    allEnded || idle ? null : new Date(now.getTime() + nextInterval(config, unchanged) * 1000).toISOString();
  return {
    format: DIGEST_FORMAT,
    tenant,
    sid,
    seq,
    at,
    reason,
    next_due: nextDue,
    previous: head ? { seq: head.seq, sha256: head.sha256, signature: head.signature } : null,
    chunks,
    writers,
    algorithm: SIGNATURE_ALGORITHM,
  };
}

/**
 * Signs the record with the signer's current key (`signDigest`).
 * @throws AppError `signing_unavailable` naming the signer's own error
 */
async function sign(
  deps: DigestDeps,
  record: Omit<DigestRecord, 'key_id'>,
  sid: string,
): Promise<SignedDigest> {
  try {
    const key = await deps.signer.current();
    return await signDigest({ ...record, key_id: key.key_id }, key);
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError(
      'signing_unavailable',
      `digest ${record.seq} of session ${sid} could not be signed, so none was written: ${messageOf(err)}; check the signing key (on AWS: the KMS key and the function's kms:Sign permission)`,
      {},
      { cause: err },
    );
  }
}

/** The head a signed digest makes, counting from the previous head. */
function headOf(d: SignedDigest, prev: DigestHead | null): DigestHead {
  const changed = d.chunks.length > 0;
  return {
    seq: d.seq,
    sha256: digestHash(d),
    signature: d.signature,
    at: d.at,
    writers: d.writers,
    closed: d.next_due === null,
    unchanged: changed ? 0 : (prev?.unchanged ?? 0) + 1,
    changed_at: changed ? d.at : (prev?.changed_at ?? d.at),
  };
}

function byW(a: { w: string }, b: { w: string }): number {
  return a.w < b.w ? -1 : a.w > b.w ? 1 : 0;
}

/** `Name: message` of an error, without its stack. */
function messageOf(err: unknown): string {
  if (err instanceof Error)
    return err.name && err.name !== 'Error' ? `${err.name}: ${err.message}` : err.message;
  return String(err);
}
