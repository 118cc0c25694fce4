/**
 * `hansard work status` (seed 004 step 7, docs/work.md): the caller's work items as the server answers
 * them, merged with what this machine holds (its leases and its pending operations). Freshness words, and
 * only these: `observed` (the server's unexpired lease), `observed on this machine` (a local lease, the
 * server not asked or not answering), `unknown (…)` (an expired, missing or unreadable lease, or one
 * renewed after now: a clock that ran ahead, issue 25.5, with the reason in words), `stopped
 * (completed|paused)`, `closing` (a stop not yet acknowledged), `not started` (a start not yet
 * acknowledged). Expiry is never shown as idle, finished or abandoned.
 *
 * Every row names the item's session, system and actor (what a heartbeat, checkpoint, wait or stop must
 * name). A lease this machine holds for an item it has no item file of (a heartbeat sent while the server
 * was away, of an item started elsewhere: seed 004, heartbeat and status are local-only and work offline)
 * is listed too, by the owner that heartbeat named, as not acknowledged by the server (`acknowledged:
 * false`): the server has not checked that the item exists nor that this token may renew it.
 */

import type { WorkSummary } from '../../contract/work.js';
import { leaseDoubt } from '../../contract/work-lease.js';
import { escapeControl } from '../../log/format/escape.js';
import {
  type LeaseReading,
  type LocalItem,
  listItems,
  listLeaseIds,
  listPending,
  type PendingRead,
  readLease,
} from './local.js';

/** One item as `status` shows it. */
export interface StatusRow {
  /** null for a start not yet acknowledged */
  id: string | null;
  session: string;
  /** the harness or system and the actor the item was started with (or, not acknowledged, named) */
  system: string;
  actor: string;
  /** null for a lease alone (this machine never had the item acknowledged) */
  mode: string | null;
  summary: string | null;
  /**
   * whether the server ever acknowledged the item to this machine (it answered it now, or this machine
   * keeps its item file); false for a start not yet acknowledged and for a lease alone
   */
  acknowledged: boolean;
  shown: 'observed' | 'observed_here' | 'unknown' | 'stopped' | 'closing' | 'not_started';
  /** the freshness in words, as the human output prints it */
  freshness: string;
  /** the server's view of its freshness, when the server answered for it */
  server: WorkSummary['freshness'] | null;
  state: WorkSummary['state'] | null;
  outcome: WorkSummary['outcome'];
  /** what a waiting item waits on, as the server answered it (null when not waiting or not answered) */
  waiting_on: WorkSummary['waiting_on'];
  local_lease: { state: LeaseReading['state']; expires_at?: string };
  pending: { op: string; created_at: string; file: string } | null;
}

/** What the server said: the items of the sessions it answered for (`answered`), at its `as_of`. */
export interface ServerAnswer {
  items: WorkSummary[];
  as_of: string | null;
  answered: Set<string>;
}

/** Merges the server's items with this machine's items, leases and pending operations, at `now` (ms). */
export function statusRows(
  state: string,
  server: ServerAnswer,
  sessions: Set<string> | null,
  now: number,
): StatusRow[] {
  const pending = listPending(state);
  const pendingById = new Map<string, PendingRead>();
  for (const p of pending) if (p.op?.work_id) pendingById.set(p.op.work_id, p);
  const local = listItems(state).filter((i) => !sessions || sessions.has(i.session));
  const rows: StatusRow[] = [];
  const seen = new Set<string>();
  const asOf = Date.parse(server.as_of ?? '') || now;
  for (const v of server.items) {
    seen.add(v.id);
    rows.push(fromServer(v, readLease(state, v.id, now), pendingById.get(v.id) ?? null, asOf));
  }
  for (const i of local) {
    if (seen.has(i.id)) continue;
    const answered = server.answered.has(i.session);
    seen.add(i.id);
    rows.push(fromLocal(i, readLease(state, i.id, now), pendingById.get(i.id) ?? null, now, answered));
  }
  for (const id of listLeaseIds(state)) {
    if (seen.has(id)) continue;
    const row = leaseOnly(id, readLease(state, id, now), now, server);
    if (row && (!sessions || sessions.has(row.session))) rows.push(row);
  }
  for (const p of pending) {
    if (!p.op || p.op.work_id !== null) continue;
    const b = p.op.body as {
      session?: string;
      system?: string;
      actor?: string;
      mode?: string;
      summary?: string;
    };
    if (sessions && !sessions.has(String(b.session))) continue;
    rows.push({
      id: null,
      session: String(b.session ?? ''),
      system: String(b.system ?? ''),
      actor: String(b.actor ?? ''),
      mode: String(b.mode ?? ''),
      summary: String(b.summary ?? ''),
      acknowledged: false,
      shown: 'not_started',
      freshness: 'not started: the start was not acknowledged (run `hansard work resume`)',
      server: null,
      state: null,
      outcome: null,
      waiting_on: null,
      local_lease: { state: 'missing' },
      pending: pendingInfo(p),
    });
  }
  return rows;
}

function fromServer(
  v: WorkSummary,
  lease: LeaseReading,
  pending: PendingRead | null,
  asOf: number,
): StatusRow {
  const f = v.freshness;
  const reported = `last reported ${f.last_reported.op} ${ago(asOf - Date.parse(f.last_reported.at))}`;
  let words: string;
  let shown: StatusRow['shown'] = f.shown;
  if (pending?.op?.op === 'stop' && v.state !== 'stopped') {
    shown = 'closing';
    words = 'closing: the stop was not acknowledged (run `hansard work resume`)';
  } else if (f.shown === 'stopped') {
    words = `stopped (${v.outcome ?? 'outcome not recorded'}) ${ago(asOf - Date.parse(f.last_reported.at))}`;
  } else if (f.shown === 'observed') {
    words = `observed; ${reported}`;
  } else {
    words = `${serverUnknown(f, asOf)}; ${reported}`;
    // The server's lease ran out but this machine renewed its own: say both, each with its authority.
    if (lease.state === 'observed')
      words += '; observed on this machine (its heartbeat not yet acknowledged)';
    if (lease.state === 'ahead') words += `; ${aheadWords(lease, asOf)}`;
  }
  if (pending && pending.op?.op !== 'stop') words += pendingWords(pending);
  return {
    id: v.id,
    session: v.session,
    system: v.system,
    actor: v.actor,
    mode: v.mode,
    summary: v.summary,
    acknowledged: true,
    shown,
    freshness: words,
    server: f,
    state: v.state,
    outcome: v.outcome,
    waiting_on: v.state === 'waiting' ? (v.waiting_on ?? null) : null,
    local_lease: leaseInfo(lease),
    pending: pending ? pendingInfo(pending) : null,
  };
}

function fromLocal(
  i: LocalItem,
  lease: LeaseReading,
  pending: PendingRead | null,
  now: number,
  serverAnswered: boolean,
): StatusRow {
  let shown: StatusRow['shown'];
  let words: string;
  if (pending?.op?.op === 'stop') {
    shown = 'closing';
    words = 'closing: the stop was not acknowledged (run `hansard work resume`)';
  } else if (lease.state === 'observed') {
    shown = 'observed_here';
    words = `observed on this machine (lease until ${clock(lease.expires_at)})`;
  } else if (lease.state === 'ahead') {
    shown = 'unknown';
    words = `unknown (${aheadWords(lease, now)})`;
  } else {
    shown = 'unknown';
    words =
      lease.state === 'expired'
        ? `unknown (lease on this machine expired ${ago(now - Date.parse(lease.expires_at))})`
        : lease.state === 'missing'
          ? 'unknown (no lease on this machine)'
          : 'unknown (the lease file on this machine is unreadable)';
  }
  if (serverAnswered) words += '; the server did not list it';
  if (pending && pending.op?.op !== 'stop') words += pendingWords(pending);
  return {
    id: i.id,
    session: i.session,
    system: i.system,
    actor: i.actor,
    mode: i.mode,
    summary: i.summary,
    acknowledged: true,
    shown,
    freshness: words,
    server: null,
    state: null,
    outcome: null,
    waiting_on: null,
    local_lease: leaseInfo(lease),
    pending: pending ? pendingInfo(pending) : null,
  };
}

/**
 * A lease this machine holds with no item file (`leaseOnly` in the module doc), or null for a lease that
 * names no owner (written before leases kept one) or is missing. Its freshness is the local lease's, and
 * says it was not acknowledged.
 */
function leaseOnly(id: string, lease: LeaseReading, now: number, server: ServerAnswer): StatusRow | null {
  if (lease.state === 'missing' || lease.state === 'corrupt') return null;
  const named = lease.lease.named;
  if (!named) return null;
  let shown: StatusRow['shown'] = 'unknown';
  let words: string;
  if (lease.state === 'observed') {
    shown = 'observed_here';
    words = `observed on this machine (lease until ${clock(lease.expires_at)})`;
  } else if (lease.state === 'ahead') words = `unknown (${aheadWords(lease, now)})`;
  else words = `unknown (lease on this machine expired ${ago(now - Date.parse(lease.expires_at))})`;
  words +=
    '; not acknowledged by the server: a heartbeat renewed it here while the server was away, and the server has not checked that the item exists or that this token may renew it';
  if (server.answered.has(named.session)) words += '; the server did not list it';
  return {
    id,
    session: named.session,
    system: named.system,
    actor: named.actor,
    mode: null,
    summary: null,
    acknowledged: false,
    shown,
    freshness: words,
    server: null,
    state: null,
    outcome: null,
    waiting_on: null,
    local_lease: leaseInfo(lease),
    pending: null,
  };
}

/**
 * One line per item: id, mode, summary (`(heartbeat only)` for a lease alone), freshness, for a waiting
 * item what it waits on, then whose it is: `(actor priya, system hansard-cli, session s_…)`.
 */
export function renderRows(rows: StatusRow[]): string {
  return rows
    .map((r) => {
      const what =
        r.mode === null
          ? '(heartbeat only)'
          : `${escapeControl(r.mode)}  "${escapeControl(r.summary ?? '')}"`;
      const who = `(actor ${escapeControl(r.actor)}, system ${escapeControl(r.system)}, session ${escapeControl(r.session)})`;
      return `${r.id ?? '(pending start)'}  ${what}  ${r.freshness}${waitingWords(r.waiting_on)}  ${who}\n`;
    })
    .join('');
}

/** `; waiting on <kind>[:<ref>]: <reason>` (docs/work.md), or nothing. */
function waitingWords(w: StatusRow['waiting_on']): string {
  if (!w) return '';
  const d = w.dependency;
  return `; waiting on ${escapeControl(d.kind)}${d.ref ? `:${escapeControl(d.ref)}` : ''}: ${escapeControl(w.reason)}`;
}

function pendingWords(p: PendingRead): string {
  return `; a ${p.op?.op ?? 'changed'} not yet acknowledged (run \`hansard work resume\`)`;
}

function pendingInfo(p: PendingRead): StatusRow['pending'] {
  return { op: p.op?.op ?? 'unreadable', created_at: p.op?.created_at ?? '', file: p.path };
}

function leaseInfo(l: LeaseReading): StatusRow['local_lease'] {
  return l.state === 'observed' || l.state === 'expired' || l.state === 'ahead'
    ? { state: l.state, expires_at: l.expires_at }
    : { state: l.state };
}

/**
 * Why the server's lease reads unknown: expired, or (issue 25.5) not expired but no evidence of
 * activity: renewed after the server's time, or longer than any TTL (lib/service/work/view.ts).
 */
function serverUnknown(f: WorkSummary['freshness'], asOf: number): string {
  const expires = Date.parse(f.lease_expires_at);
  const doubt = expires > asOf ? leaseDoubt(f, asOf) : null;
  if (doubt === 'renewed_ahead') {
    const by = duration(Date.parse(f.last_heartbeat_at) - asOf);
    return `unknown (the server's lease was renewed at ${clock(f.last_heartbeat_at)}, ${by} after the server's time: a clock ran ahead, and a renewal dated in the future is no evidence of activity now)`;
  }
  if (doubt === 'too_long') return "unknown (the server's lease runs longer than any TTL past its renewal)";
  return `unknown (lease expired ${ago(asOf - expires)})`;
}

/** A local lease renewed after `now`, in words (issue 25.5). */
function aheadWords(l: Extract<LeaseReading, { state: 'ahead' }>, now: number): string {
  const by = duration(Date.parse(l.renewed_at) - now);
  return `the lease on this machine was renewed at ${clock(l.renewed_at)}, ${by} after now: the clock of the process that wrote it ran ahead, and a renewal dated in the future is no evidence of activity now`;
}

/** A positive duration in ms as "12 s", "3 min", "2 h 5 min", "2 d" (to the nearest minute past one). */
function duration(ms: number): string {
  const s = Math.max(1, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  if (m < 2880) return `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60} min` : ''}`;
  return `${Math.round(m / 1440)} d`;
}

/** A duration in ms as "12 s ago", "3 min ago", "5 h ago", "2 d ago" (a clock ahead reads "just now"). */
export function ago(ms: number): string {
  if (!Number.isFinite(ms)) return 'at an unknown time';
  const s = Math.floor(ms / 1000);
  if (s < 1) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 172_800) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

function clock(iso: string): string {
  return `${iso.slice(11, 19)} UTC`;
}
