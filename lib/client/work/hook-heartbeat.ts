/**
 * The Claude Code hook heartbeats its session's open work items (issue 13 item 6, seed 004 step 3,
 * docs/work.md). Two halves so the hook never waits on the network:
 *
 * - `renewSessionLeases` runs inside the hook (file writes only): each item of the hook's hansard session
 *   that this machine knows (`<state>/work/<wk_id>.json`) gets its local lease renewed, at most once per
 *   TTL/3, unless its stop is pending (a closing item is not renewed, seed 004 step 6).
 * - `sendDueHeartbeats` runs in the detached shipper (`hansard hook ship`): every lease renewed since the
 *   server last acknowledged one is sent as `POST /v1/work/{id}/heartbeat` with the shipper's token.
 *
 * Node builtins and `local.ts` only in the first half: it is loaded on every tool call.
 */
import { forgetItem, listItems, markLeaseSent, pendingOf, readLease, renewLease } from './local.js';

/**
 * Renews the local lease of every open work item of hansard session `sid` whose lease was renewed more
 * than a third of its TTL ago (or is missing, expired or unreadable: a hook event is a new observation,
 * not a repair). Returns the ids renewed. Never throws.
 */
export function renewSessionLeases(state: string, sid: string, now = Date.now()): string[] {
  const renewed: string[] = [];
  try {
    for (const item of listItems(state)) {
      if (item.session !== sid) continue;
      if (pendingOf(state, item.id)?.op?.op === 'stop') continue;
      const lease = readLease(state, item.id, now);
      if (lease.state === 'observed') {
        const last = Date.parse(lease.lease.renewed_at);
        if (Number.isFinite(last) && now - last < (item.ttl_seconds * 1000) / 3) continue;
      }
      try {
        renewLease(state, item.id, item.ttl_seconds, now, false);
        renewed.push(item.id);
      } catch {
        // an unwritable state directory: the hook records its own failures; a lease is disposable
      }
    }
  } catch {
    // never in the hook's way
  }
  return renewed;
}

/**
 * What `sendDueHeartbeats` did: ids acknowledged; ids forgotten (the server says the item is over, or not
 * this token's); heartbeats the server refused as not this caller's (`refused`: `not_owner`, the item
 * forgotten too; `work_mismatch`, left due), with the refusal's code and message; the others left for
 * later (`failed`: the network, a token without `report`).
 */
export interface HeartbeatReport {
  sent: string[];
  forgotten: string[];
  refused: { id: string; code: 'not_owner' | 'work_mismatch'; reason: string }[];
  failed: { id: string; reason: string }[];
}

/**
 * Sends a heartbeat for every item whose local lease was renewed after the server's last
 * acknowledgement (`sent_at`) and is still unexpired; marks it acknowledged. An item the server says is
 * stopped or unknown (409 `work_stopped`, 404) or not this token's (403 `not_owner`) is forgotten here,
 * as `hansard work heartbeat` does: no lease may claim activity for it. A `work_mismatch` (the owner's
 * token naming another session, system or actor) is reported and left. Anything else is left for the
 * next run. Never throws.
 */
export async function sendDueHeartbeats(
  state: string,
  client: {
    request(method: string, path: string, init?: { body?: string; contentType?: string }): Promise<unknown>;
  },
  now = Date.now(),
): Promise<HeartbeatReport> {
  const report: HeartbeatReport = { sent: [], forgotten: [], refused: [], failed: [] };
  for (const item of listItems(state)) {
    const lease = readLease(state, item.id, now);
    if (lease.state !== 'observed') continue;
    if ((lease.lease.sent_at ?? '') >= lease.lease.renewed_at) continue;
    if (pendingOf(state, item.id)?.op?.op === 'stop') continue;
    try {
      await client.request('POST', `/v1/work/${item.id}/heartbeat`, {
        body: JSON.stringify({ session: item.session, system: item.system, actor: item.actor }),
        contentType: 'application/json',
      });
      markLeaseSent(state, item.id, Date.parse(lease.lease.renewed_at));
      report.sent.push(item.id);
    } catch (err) {
      const e = err as { status?: number; code?: string; message?: string };
      if (e.code === 'work_stopped' || e.code === 'not_owner' || e.status === 404) {
        forgetItem(state, item.id);
        report.forgotten.push(item.id);
        if (e.code === 'not_owner')
          report.refused.push({ id: item.id, code: 'not_owner', reason: String(e.message ?? err) });
      } else if (e.code === 'work_mismatch') {
        report.refused.push({ id: item.id, code: 'work_mismatch', reason: String(e.message ?? err) });
      } else {
        report.failed.push({ id: item.id, reason: String(e.message ?? err) });
      }
    }
  }
  return report;
}
