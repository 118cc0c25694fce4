/**
 * The shipper (issue 11): drains the capture spool to the server. A hook never waits for it: it starts
 * `hansard hook ship` as a detached process (`spawnShipper`) and returns. One shipper runs per state
 * directory (a `proper-lockfile` lock, `<state>/ship.lock`); each session goes up with `uploadSession`,
 * which resumes from the server's own offsets, so a shipper killed at any point neither loses nor
 * duplicates anything: the next one sends what the server does not hold. What the server acknowledged is
 * written to `<state>/shipped.json` (the backlog `hansard doctor` shows). Server down: the events stay in
 * the spool and the next hook's shipper tries again.
 *
 * The shipper never waits for ever (issue 25 item 7): each request has a timeout (`shipTimeoutMs`, 10 s,
 * plus a second per 256 KiB it sends), and once one request timed out the run's client fails every later
 * one at once, so a server that accepts connections and never answers holds the lock about one timeout:
 * the failure is recorded, the lock released, and the next hook starts a shipper again.
 */
import { join } from 'node:path';
import { lock } from 'proper-lockfile';
import { ApiClient, NetworkError } from '../api/client.js';
import { mkdirs } from '../api/safe-fs.js';
import { uploadSession } from '../api/upload.js';
import { sendDueHeartbeats } from '../work/hook-heartbeat.js';
import { drainInboxes } from './hook.js';
import { SHIP_LOCK, SHIP_STALE_MS } from './spawn.js';
import {
  type CaptureConfig,
  readCaptureConfig,
  recordHookFailure,
  recordLastShip,
  recordShipped,
  spoolBacklog,
} from './state-dir.js';

/** How long the shipper waits for one answer by default (ms), before the time to send its body. */
export const SHIP_TIMEOUT_MS = 10_000;

/** The shipper's request timeout: `HANSARD_SHIP_TIMEOUT_MS` (tests shorten it), else 10 s. */
export function shipTimeoutMs(env: NodeJS.ProcessEnv): number {
  const n = Number(env.HANSARD_SHIP_TIMEOUT_MS);
  return Number.isFinite(n) && n > 0 ? n : SHIP_TIMEOUT_MS;
}

/** The shipper's client: requests time out, and after one timeout the rest fail at once. */
function shipClient(config: CaptureConfig, env: NodeJS.ProcessEnv, retries: number): ApiClient {
  return new ApiClient({
    url: config.url ?? 'http://127.0.0.1:8787',
    token: config.token,
    retries,
    timeoutMs: shipTimeoutMs(env),
    giveUpAfterTimeout: true,
  });
}

/** What one `shipSpool` run did. */
export interface ShipReport {
  /** false when another shipper held the lock (it does the work) */
  ran: boolean;
  /** sessions uploaded completely in this run */
  shipped: string[];
  /** sessions left for later, with the reason */
  failed: { sid: string; reason: string }[];
  /** no server configured (no token): nothing is shipped, the spool keeps everything */
  unconfigured: boolean;
}

/** Options of `shipSpool`. */
export interface ShipOptions {
  config?: CaptureConfig;
  /** client retries of a transient failure (default 2: the next hook tries again anyway) */
  retries?: number;
  /** passes over the spool (new events may arrive while one runs); default 5 */
  maxPasses?: number;
  /** the run's client (`runShipper` shares one, so that a timeout ends the whole run) */
  client?: ApiClient;
}

/**
 * Uploads every spool session with something unacknowledged, under the shipper lock (none taken: returns
 * `ran: false` at once). Never throws for the server's or the network's failures: they are recorded in
 * hook-failures.json (`hook: "shipper"`) and left for the next run.
 */
export async function shipSpool(
  state: string,
  env: NodeJS.ProcessEnv,
  options: ShipOptions = {},
): Promise<ShipReport> {
  const config = options.config ?? readCaptureConfig(env, state);
  const report: ShipReport = { ran: false, shipped: [], failed: [], unconfigured: false };
  if (!config.token) {
    report.unconfigured = true;
    return report;
  }
  mkdirs(state, 0o700);
  const lockPath = join(state, SHIP_LOCK);
  let release: () => Promise<void>;
  try {
    release = await lock(state, {
      lockfilePath: lockPath,
      realpath: false,
      stale: SHIP_STALE_MS,
      retries: 0,
      // Lost to a takeover (this process stalled past the stale time): the uploads stay correct, they
      // resume by the server's offsets; only the progress record may lag, so nothing to do.
      onCompromised: () => {},
    });
  } catch {
    return report;
  }
  report.ran = true;
  const started = Date.now();
  const client = options.client ?? shipClient(config, env, options.retries ?? 2);
  try {
    const maxPasses = options.maxPasses ?? 5;
    for (let pass = 0; pass < maxPasses; pass++) {
      const backlog = spoolBacklog(state);
      if (backlog.length === 0) break;
      let unreachable = false;
      let progressed = false;
      for (const b of backlog) {
        try {
          const r = await uploadSession(b.dir, { client });
          recordShipped(
            state,
            r.sid,
            r.segments.map((s) => ({ w: s.w, length: s.length })),
          );
          report.shipped.push(r.sid);
          progressed = true;
        } catch (err) {
          const reason = err instanceof Error ? err.message : String(err);
          report.failed.push({ sid: b.sid, reason });
          unreachable = err instanceof NetworkError;
          recordHookFailure(state, {
            hook: 'shipper',
            reason: unreachable ? 'server_unreachable' : 'internal',
            message: `${b.sid}: ${reason}`,
            ms: Date.now() - started,
          });
          if (unreachable) break;
        }
      }
      if (unreachable || !progressed) break;
    }
    // Everything acknowledged: `hansard doctor` counts the server_unreachable failures before now as over.
    if (report.shipped.length > 0 && report.failed.length === 0 && spoolBacklog(state).length === 0) {
      recordLastShip(state, new Date());
    }
  } finally {
    await release().catch(() => {});
  }
  return report;
}

/**
 * `hansard hook ship`: ship, then, when the server took everything offered and new events arrived while
 * the lock was held (a hook saw it held and started no shipper), ship again. Returns the last report.
 */
export async function runShipper(state: string, env: NodeJS.ProcessEnv): Promise<ShipReport> {
  // Deferred payloads first: a session's last events may wait in its inbox for a hook that never comes.
  await drainInboxes(state, env).catch(() => 0);
  // One client for the run: a server that let one request time out is not asked again until the next run.
  const config = readCaptureConfig(env, state);
  const client = config.token ? shipClient(config, env, 2) : undefined;
  // The work items whose lease the hooks renewed (lib/client/work/hook-heartbeat.ts): before the spool, and
  // again after it, for a hook that renewed one meanwhile and started no shipper (this one ran).
  if (client) await shipHeartbeats(state, client, false);
  let report = await shipSpool(state, env, { config, ...(client ? { client } : {}) });
  for (let again = 0; again < 3 && report.ran && report.failed.length === 0; again++) {
    if (spoolBacklog(state).length === 0) break;
    report = await shipSpool(state, env, { config, ...(client ? { client } : {}) });
  }
  if (client) await shipHeartbeats(state, client, true);
  return report;
}

/**
 * Sends the work heartbeats the hooks renewed locally, with the run's client (the capture token);
 * `record`: failures go to hook-failures.json (the run's last pass only: the first pass's failures are
 * tried again). Never throws.
 */
async function shipHeartbeats(state: string, client: ApiClient, record: boolean): Promise<void> {
  const r = await sendDueHeartbeats(state, client).catch(() => null);
  // Refusals as what they are (work_refused): a not_owner's item is forgotten, so it is recorded now (it
  // does not come back); a work_mismatch stays due, recorded at the last pass like the others.
  for (const f of r?.refused ?? []) {
    if (f.code === 'work_mismatch' && !record) continue;
    recordHookFailure(state, {
      hook: 'shipper',
      reason: 'work_refused',
      message: `work heartbeat of ${f.id} refused (${f.code})${f.code === 'not_owner' ? ', its lease forgotten here' : ''}: ${f.reason}`,
      ms: 0,
    });
  }
  // Left for the next run; recorded so that `hansard doctor` shows why (e.g. a token without `report`).
  for (const f of record ? (r?.failed ?? []) : []) {
    recordHookFailure(state, {
      hook: 'shipper',
      reason:
        f.reason.startsWith('cannot reach') || f.reason.includes('did not answer')
          ? 'server_unreachable'
          : 'internal',
      message: `work heartbeat of ${f.id}: ${f.reason}`,
      ms: 0,
    });
  }
}

/** One line saying what a shipper run did, for `hansard hook ship` run by hand. */
export function shipSummary(r: ShipReport): string {
  if (r.unconfigured)
    return 'hansard: no server configured (HANSARD_TOKEN, or `hansard integrations sync`): the spool keeps everything';
  if (!r.ran) return 'hansard: another shipper is running';
  if (r.shipped.length === 0 && r.failed.length === 0) return 'hansard: nothing to ship';
  const left = r.failed.length > 0 ? `; ${r.failed.length} left for later: ${r.failed[0]!.reason}` : '';
  return `hansard: shipped ${r.shipped.length} session(s)${left}`;
}
