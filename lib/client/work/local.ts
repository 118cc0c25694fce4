/**
 * The work items this machine knows (seed 004 "Two observations, two authorities", docs/work.md): what
 * `hansard work` and the Claude Code hook keep in the capture state directory. Three kinds of file, each
 * written through a temporary file and a rename:
 *
 * ```
 * <state>/work/<wk_id>.json                 the item as last acknowledged: owner, subject, mode, summary, TTL
 * <state>/work/<wk_id>.lease.json           the local lease: renewed_at, expires_at (and sent_at: the server's;
 *                                           named: the owner an unanswered heartbeat named)
 * <state>/work/<wk_id>.pending.json         a semantic operation not yet acknowledged (at most one per item)
 * <state>/work/start-<key>.pending.json     a start not yet acknowledged (no work id yet)
 * ```
 *
 * A pending file is written BEFORE its operation is sent and removed when the server answers, so a crash
 * or an unreachable server leaves exactly the operation to resume (same key, same body). The lease is
 * disposable evidence for this machine only: a missing or corrupt one reads as `unknown`, never as
 * activity. Node builtins only: the hook loads this on every tool call.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readJson, writeJsonAtomic } from '../api/json-files.js';
import { readRegularFile } from '../api/safe-fs.js';

/** `<state>/work`. */
export function workDir(state: string): string {
  return join(state, 'work');
}

const WORK_ID = /^wk_[0-9A-HJKMNP-TV-Z]{26}$/;

/** Whether `id` is a work id (`wk_` + ULID): safe in a file name. */
export function isWorkId(id: unknown): id is string {
  return typeof id === 'string' && WORK_ID.test(id);
}

/** What this machine remembers of an item it started or changed (from the server's acknowledgements). */
export interface LocalItem {
  version: 1;
  id: string;
  session: string;
  system: string;
  actor: string;
  ttl_seconds: number;
  subject: { kind: string; ref: string };
  mode: string;
  summary: string;
  started_at: string;
}

/** The local lease of one item: evidence for this machine only. Times are RFC 3339. */
export interface LocalLease {
  version: 1;
  id: string;
  renewed_at: string;
  expires_at: string;
  ttl_seconds: number;
  /** when the server last acknowledged a heartbeat (or start) of this item from this machine */
  sent_at?: string;
  /**
   * the session, system and actor a heartbeat named when the server did not answer it: what
   * `hansard work status` lists an item by when this machine has no item file for it (a heartbeat of an
   * item started elsewhere, sent while the server was away), as not acknowledged by the server
   */
  named?: { session: string; system: string; actor: string };
}

/** A semantic operation written before it is sent (seed 004 "resume the exact pending operation"). */
export interface PendingOp {
  version: 1;
  op: 'start' | 'checkpoint' | 'wait' | 'stop';
  /** null for a start (the server gives the id) */
  work_id: string | null;
  /** the request body exactly as sent (owner fields included) */
  body: Record<string, unknown>;
  idempotency_key: string;
  created_at: string;
}

/**
 * How the local lease of an item reads now. `ahead`: renewed after now (a process whose clock ran ahead
 * wrote it), which is no evidence of activity now (issue 25.5): read as unknown, and renewed by the next
 * heartbeat of a process whose clock is right.
 */
export type LeaseReading =
  | { state: 'observed'; expires_at: string; lease: LocalLease }
  | { state: 'expired'; expires_at: string; lease: LocalLease }
  | { state: 'ahead'; expires_at: string; renewed_at: string; lease: LocalLease }
  | { state: 'missing' }
  | { state: 'corrupt' };

export function itemPath(state: string, id: string): string {
  return join(workDir(state), `${id}.json`);
}
export function leasePath(state: string, id: string): string {
  return join(workDir(state), `${id}.lease.json`);
}
/** The pending file of an item's operation, or of a start (by its idempotency key). */
export function pendingPath(state: string, op: Pick<PendingOp, 'work_id' | 'idempotency_key'>): string {
  return join(
    workDir(state),
    op.work_id ? `${op.work_id}.pending.json` : `start-${op.idempotency_key}.pending.json`,
  );
}

/** The item file of `id`, or null when absent or not one. */
export function readItem(state: string, id: string): LocalItem | null {
  const v = readJson(itemPath(state, id)) as LocalItem | null;
  return v && v.version === 1 && v.id === id && typeof v.session === 'string' ? v : null;
}

/** The ids of every lease file in `<state>/work`, with or without an item file. */
export function listLeaseIds(state: string): string[] {
  return names(state)
    .filter((f) => f.endsWith('.lease.json') && isWorkId(f.slice(0, -'.lease.json'.length)))
    .map((f) => f.slice(0, -'.lease.json'.length));
}

/** Every item file in `<state>/work`, by id (unreadable ones skipped). */
export function listItems(state: string): LocalItem[] {
  return names(state)
    .filter((f) => f.endsWith('.json') && isWorkId(f.slice(0, -5)))
    .map((f) => readItem(state, f.slice(0, -5)))
    .filter((i): i is LocalItem => i !== null);
}

export function writeItem(state: string, item: LocalItem): void {
  writeJsonAtomic(itemPath(state, item.id), item);
}

/** Forgets an item (after an acknowledged stop): its item and lease files. */
export function forgetItem(state: string, id: string): void {
  rmSync(itemPath(state, id), { force: true });
  rmSync(leasePath(state, id), { force: true });
}

/** The largest lease file read (a real one is a few hundred bytes): a larger one is corrupt. */
const MAX_LEASE_FILE_BYTES = 64 * 1024;

/** The longest lease a heartbeat writes (the server's TTL bound, lib/contract/work.ts WORK_TTL), ms. */
const MAX_LEASE_MS = 86_400_000;

/**
 * The local lease of `id` at `now` (ms): `observed` before its `expires_at`, `expired` after, `missing`
 * without a file, `corrupt` when the file is not a lease or not a regular file (a FIFO or a device is never
 * read: it would block the hook that renews leases; never repaired: seed 004 failure posture). A
 * lease that expires more than the longest TTL (24 h) after its `renewed_at`, or after `now`, is not one
 * a heartbeat of this machine wrote (a hand edit, a clock far ahead): corrupt too. A lease renewed after
 * `now` (a process whose clock ran ahead, issue 25.5) is `ahead`: a renewal dated in the future is no
 * evidence of activity now, so it never reads observed, whatever its expiry (else a clock 2 h ahead
 * would show a 15 min lease as observed for 2 h 15 min).
 */
export function readLease(state: string, id: string, now = Date.now()): LeaseReading {
  let raw: unknown;
  try {
    // not readJson: the lease needs the difference between missing (ENOENT) and corrupt; a regular file
    // only (a FIFO or a device put there would block the hook or the shipper, issue 25 item 1)
    raw = JSON.parse(readRegularFile(leasePath(state, id), MAX_LEASE_FILE_BYTES).toString('utf8'));
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? { state: 'missing' } : { state: 'corrupt' };
  }
  const l = raw as LocalLease | null;
  const exp = Date.parse(typeof l?.expires_at === 'string' ? l.expires_at : '');
  if (l?.version !== 1 || l.id !== id || !Number.isFinite(exp) || !namedOk(l.named)) {
    return { state: 'corrupt' };
  }
  const renewed = Date.parse(typeof l.renewed_at === 'string' ? l.renewed_at : '');
  if (!Number.isFinite(renewed) || exp - renewed > MAX_LEASE_MS || exp - now > MAX_LEASE_MS) {
    return { state: 'corrupt' };
  }
  if (renewed > now) {
    return { state: 'ahead', expires_at: l.expires_at, renewed_at: l.renewed_at, lease: l };
  }
  return exp > now
    ? { state: 'observed', expires_at: l.expires_at, lease: l }
    : { state: 'expired', expires_at: l.expires_at, lease: l };
}

/** A lease's `named`: absent, or three strings. */
function namedOk(n: unknown): boolean {
  if (n === undefined) return true;
  const o = n as Record<string, unknown> | null;
  return !!o && ['session', 'system', 'actor'].every((k) => typeof o[k] === 'string');
}

/**
 * Renews the local lease of `id` for `ttlSeconds` from `now` (keeps `sent_at`, or sets it when `sent`).
 * `named`: the owner an unanswered heartbeat named (kept from the lease before when not given; dropped
 * once the server acknowledges one, `sent`).
 * @throws the file system's error
 */
export function renewLease(
  state: string,
  id: string,
  ttlSeconds: number,
  now: number,
  sent: boolean,
  named?: LocalLease['named'],
): LocalLease {
  const prev = readLease(state, id, now);
  const before = prev.state === 'observed' || prev.state === 'expired' ? prev.lease : undefined;
  const sentAt = sent ? new Date(now).toISOString() : before?.sent_at;
  const owner = sent ? undefined : (named ?? before?.named);
  const lease: LocalLease = {
    version: 1,
    id,
    renewed_at: new Date(now).toISOString(),
    expires_at: new Date(now + ttlSeconds * 1000).toISOString(),
    ttl_seconds: ttlSeconds,
    ...(sentAt ? { sent_at: sentAt } : {}),
    ...(owner ? { named: owner } : {}),
  };
  writeJsonAtomic(leasePath(state, id), lease);
  return lease;
}

/** Records that the server acknowledged a heartbeat sent at `at` (ms), without renewing the lease. */
export function markLeaseSent(state: string, id: string, at: number): void {
  const r = readLease(state, id, at);
  if (r.state !== 'observed' && r.state !== 'expired') return;
  writeJsonAtomic(leasePath(state, id), { ...r.lease, sent_at: new Date(at).toISOString() });
}

/** Writes a pending operation before it is sent. @throws the file system's error */
export function writePending(state: string, op: PendingOp): string {
  const path = pendingPath(state, op);
  writeJsonAtomic(path, op);
  return path;
}

/** A pending file as read back: the operation, or why it cannot be sent as it is. */
export type PendingRead = { path: string; op: PendingOp } | { path: string; op: null; problem: string };

/** Every pending file in `<state>/work`, oldest first (by `created_at`). */
export function listPending(state: string): PendingRead[] {
  const out: PendingRead[] = [];
  for (const f of names(state).filter((n) => n.endsWith('.pending.json'))) {
    const path = join(workDir(state), f);
    const op = readJson(path) as PendingOp | null;
    const ok =
      op?.version === 1 &&
      ['start', 'checkpoint', 'wait', 'stop'].includes(op.op) &&
      (op.work_id === null ? op.op === 'start' : isWorkId(op.work_id)) &&
      typeof op.idempotency_key === 'string' &&
      op.body !== null &&
      typeof op.body === 'object' &&
      typeof op.created_at === 'string';
    out.push(
      ok ? { path, op } : { path, op: null, problem: 'not a pending operation (unreadable or changed)' },
    );
  }
  return out.sort((a, b) => (created(a) < created(b) ? -1 : created(a) > created(b) ? 1 : 0));
}

function created(p: PendingRead): string {
  return p.op?.created_at ?? '';
}

/** The pending operation of item `id`, if any. */
export function pendingOf(state: string, id: string): PendingRead | null {
  return listPending(state).find((p) => p.path.endsWith(`/${id}.pending.json`)) ?? null;
}

export function removePending(path: string): void {
  rmSync(path, { force: true });
}

function names(state: string): string[] {
  try {
    return readdirSync(workDir(state));
  } catch {
    return [];
  }
}
