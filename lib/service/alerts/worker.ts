/**
 * The alert worker (issue 28 item 4): turns due outbox events into deliveries and sends them. The local
 * server runs it in-process (`start`), the AWS delivery function calls `drainOnce` (functions/alerts.ts).
 *
 * - **At least once**: an event leaves the outbox only in the transaction that makes its deliveries
 *   (`fanOut`), and a delivery is finished only after its answer; a worker killed in between leaves both
 *   to the next one (a claim ends after `CLAIM_MS`). The receiver tells a repeat apart by `webhook-id`.
 * - **In order per session**: only the oldest unfinished delivery of each (target, session) is due
 *   (`listDueDeliveries`), so a retried event holds back the later events of its session for that target,
 *   never another session's or another target's.
 * - **A slow target delays nobody else**: each target's deliveries run in a loop of its own, one at a time;
 *   `start` never waits for one target before looking at the others, and ingest never waits for any.
 * - **Slack**: at most one message a second per target (Slack's incoming-webhook limit).
 * - **Held states**: a rule's `after_seconds` delays a session state's (or an unknown lease's) delivery;
 *   when it is due the state is read again, and a state that ended meanwhile is `skipped`, with why.
 */
import { HELD_KINDS } from '../../contract/alerts.js';
import {
  type AlertDelivery,
  type AlertTarget,
  type OutboxEvent,
  StateConflictError,
} from '../../store/index.js';
import type { AlertDeps } from './deps.js';
import { matches } from './match.js';
import { signedHeaders, slackBody, standardBody, wireEvent } from './payload.js';
import { nextTry } from './schedule.js';
import { openSecrets } from './secrets.js';
import { postJson } from './send.js';
import { checkTargetUrl } from './url-guard.js';
import { lookAt } from './watch.js';

/** How long a claimed delivery is held beyond its attempt's time limit, ms. */
const CLAIM_MS = 30_000;
/** Most events one listing takes, and most deliveries one pass takes. */
const BATCH = 100;
/** Most events one pass fans out (listings of `BATCH`): fan-out sends nothing, so one tenant's burst is
 * taken in the same pass as another tenant's event behind it. */
const MAX_FAN_OUT = 2_000;
/** Most deliveries of one target a pass takes: a target with a backlog leaves room for the others. */
const PER_TARGET = 10;
/** How long an event whose fan-out failed (a store fault, a transcript that cannot be read) waits, ms. */
const FAN_OUT_RETRY_MS = 60_000;
/** Slack's incoming webhooks take one message a second. */
const SLACK_GAP_MS = 1_000;
/** The kinds a rule's `after_seconds` holds back (lib/contract/alerts.ts). */
const HELD = new Set<string>(HELD_KINDS);

/** What one pass did. */
export interface DrainStats {
  /** outbox events looked at (fanned out, dropped or set due later) */
  events: number;
  /** delivery attempts made (sent, skipped or failed) */
  deliveries: number;
}

export class AlertWorker {
  /** targets whose loop is running (`start` mode), by `tenant/id` */
  private readonly busy = new Map<string, Promise<void>>();
  /** the last time a Slack message went to each target, ms (this process) */
  private readonly lastSlack = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private stopping = false;
  private ticking: Promise<void> | null = null;

  constructor(
    private readonly deps: AlertDeps,
    private readonly o: { pollMs?: number; log?: (line: string) => void } = {},
  ) {}

  /**
   * One pass: fans out every due event, then sends every due delivery, each target's in turn, all targets
   * at once; resolves when all are done. With `stopAt` (epoch ms, the wall clock), no attempt starts that
   * could still be running then (its time limit would pass it): the rest wait for the next pass, so a
   * hanging target cannot hold a Lambda invocation past its end.
   */
  async drainOnce(o: { stopAt?: number } = {}): Promise<DrainStats> {
    const events = await this.fanOutDue();
    const due = await this.deps.state.listDueDeliveries(this.deps.now().toISOString(), BATCH, {
      perTarget: PER_TARGET,
    });
    const byTarget = groupByTarget(due);
    const counts = await Promise.all(
      [...byTarget].map(([key, ds]) =>
        this.runTarget(ds, o.stopAt).catch((err) => {
          this.log(`alerts: target ${key}: ${(err as Error).message}`);
          return 0;
        }),
      ),
    );
    return { events, deliveries: counts.reduce((a, b) => a + b, 0) };
  }

  /** Runs passes every `pollMs` (default 1,000) until `stop`; a target's slow loop runs on beside them. */
  start(): void {
    this.stopping = false;
    const tick = async () => {
      this.timer = null;
      try {
        await this.fanOutDue();
        // Targets busy with their last listing are left out: their backlog never fills this one.
        const due = await this.deps.state.listDueDeliveries(this.deps.now().toISOString(), BATCH, {
          perTarget: PER_TARGET,
          exclude: [...this.busy.keys()],
        });
        for (const [key, ds] of groupByTarget(due)) {
          if (this.busy.has(key)) continue;
          const run = this.runTarget(ds)
            .catch((err) => this.log(`alerts: target ${key}: ${(err as Error).message}`))
            .then(() => void this.busy.delete(key));
          this.busy.set(key, run);
        }
      } catch (err) {
        this.log(`alerts: ${(err as Error).message}`);
      }
      if (this.stopping) return;
      this.timer = setTimeout(() => {
        this.ticking = tick();
      }, this.o.pollMs ?? 1_000);
    };
    this.ticking = tick();
  }

  /** Stops the passes and waits for the attempts in flight (each ends within its time limit). */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
    await Promise.allSettled([...this.busy.values()]);
  }

  private log(line: string): void {
    (this.o.log ?? ((l: string) => process.stderr.write(`${l}\n`)))(line);
  }

  /**
   * Every due outbox event, fanned out (or dropped, or set due later), up to `MAX_FAN_OUT` a pass. An
   * event whose fan-out fails is set due `FAN_OUT_RETRY_MS` later and the others go on: one event (or one
   * tenant's targets) that cannot be read holds up no other. @returns how many were looked at
   */
  private async fanOutDue(): Promise<number> {
    const targets = new Map<string, Promise<AlertTarget[]>>();
    let n = 0;
    while (n < MAX_FAN_OUT) {
      const now = this.deps.now();
      const events = await this.deps.state.listDueEvents(now.toISOString(), BATCH);
      for (const e of events) {
        let ts = targets.get(e.tenant);
        if (!ts) {
          ts = this.deps.state.listAlertTargets(e.tenant);
          targets.set(e.tenant, ts);
        }
        try {
          await this.fanOutOne(e, await ts);
        } catch (err) {
          this.log(
            `alerts: event ${e.id} of ${e.tenant}: ${(err as Error).message}; tried again in a minute`,
          );
          const later = new Date(now.getTime() + FAN_OUT_RETRY_MS).toISOString();
          await this.deps.state.rescheduleEvent(e.tenant, e.id, later).catch(() => undefined);
        }
      }
      n += events.length;
      if (events.length < BATCH) break;
    }
    return n;
  }

  private async fanOutOne(e: OutboxEvent, targets: AlertTarget[]): Promise<void> {
    let fired: { id: string; at: string; data: Record<string, unknown> } = e;
    if (e.watch) {
      const outcome = await lookAt(this.deps, e);
      if (outcome.kind === 'later') return this.deps.state.rescheduleEvent(e.tenant, e.id, outcome.due_at);
      if (outcome.kind === 'drop') return this.deps.state.fanOut(e, []);
      fired = outcome;
    }
    const agents = targets.some((t) => t.agents.length > 0) && e.sid ? await this.agentsOf(e) : [];
    const now = this.deps.now().toISOString();
    const deliveries: AlertDelivery[] = targets
      .filter((t) => matches(t, { ...e, agents }))
      .map((t) => {
        const after = HELD.has(e.kind) ? t.after_seconds : 0;
        return {
          tenant: e.tenant,
          target_id: t.id,
          event_id: fired.id,
          kind: e.kind,
          sid: e.sid,
          order: `${fired.at}#${fired.id}`,
          status: 'pending',
          attempts: 0,
          next_at: new Date(Date.parse(fired.at) + after * 1000).toISOString(),
          created_at: now,
          claimed_until: null,
          last_status: null,
          last_error: null,
          delivered_at: null,
          skipped_reason: null,
          event: { at: fired.at, data: fired.data },
          after_seconds: after,
        };
      });
    await this.deps.state.fanOut(e, deliveries);
  }

  /** The agent names of the event's session, from its writers' `meta.agent`. */
  private async agentsOf(e: OutboxEvent): Promise<string[]> {
    const writers = await this.deps.state.listWriters(e.tenant, e.sid!);
    return [...new Set([...e.agents, ...writers.flatMap((w) => (w.agent ? [w.agent] : []))])];
  }

  /** One target's due deliveries, one at a time, none started past `stopAt`; @returns how many were attempted */
  private async runTarget(ds: AlertDelivery[], stopAt?: number): Promise<number> {
    let n = 0;
    // The target's secrets opened once for its run: one KMS Decrypt per secret and pass, not per attempt.
    const secrets = new Map<string, Promise<string[]>>();
    for (const d of ds) {
      if (this.stopping) break;
      if (stopAt !== undefined && Date.now() + this.deps.config.timeoutMs + SLACK_GAP_MS > stopAt) break;
      try {
        if (await this.attempt(d, secrets)) n += 1;
      } catch (err) {
        // A store fault on this delivery: its claim runs out and a later pass takes it again.
        this.log(`alerts: delivery ${d.event_id} to ${d.target_id}: ${(err as Error).message}`);
      }
    }
    return n;
  }

  /** Claims, checks and sends one delivery, and records what came of it; false when another worker has it. */
  private async attempt(d: AlertDelivery, opened: Map<string, Promise<string[]>>): Promise<boolean> {
    const { state, config } = this.deps;
    const now = this.deps.now();
    const until = new Date(now.getTime() + config.timeoutMs + CLAIM_MS).toISOString();
    if (!(await state.claimDelivery(d, now.toISOString(), until))) return false;
    // A finish that finds the delivery moved on (its target removed meanwhile, or this worker's claim
    // ran out and another finished it) lost a race: the other outcome stands, nothing to undo.
    const finish = (r: Partial<Parameters<typeof state.finishAttempt>[1]>) =>
      state
        .finishAttempt(d, {
          status: 'pending',
          attempts: d.attempts,
          next_at: d.next_at,
          last_status: d.last_status,
          last_error: d.last_error,
          delivered_at: null,
          skipped_reason: null,
          ...r,
        })
        .catch((err: unknown) => {
          if (!(err instanceof StateConflictError)) throw err;
        });
    const target = await state.getAlertTarget(d.tenant, d.target_id);
    if (!target)
      return finish({ status: 'skipped', next_at: null, skipped_reason: 'the target was removed' }).then(
        () => true,
      );
    if (d.after_seconds > 0) {
      const ended = await this.stateEnded(d);
      if (ended) return finish({ status: 'skipped', next_at: null, skipped_reason: ended }).then(() => true);
    }
    if (target.format === 'slack') await this.slackGap(target);
    const event = wireEvent(d, config.boardOrigin);
    const body = target.format === 'slack' ? slackBody(event) : standardBody(event);
    let result: { status: number | null; error: string | null };
    try {
      const url = await checkTargetUrl(target.url, config.allowPrivateTargets);
      const key = `${target.id}#${target.version}`;
      let secrets = opened.get(key);
      if (!secrets) {
        secrets = openSecrets(this.deps.sealer, target, now);
        opened.set(key, secrets);
      }
      // The signature's time is the attempt's wall-clock time: receivers check it against theirs.
      const headers = signedHeaders(d.event_id, new Date(), body, await secrets);
      result = await postJson(url, headers, body, {
        timeoutMs: config.timeoutMs,
        allowPrivate: config.allowPrivateTargets,
      });
    } catch (err) {
      // Our own refusal (the address rule, a secret that does not open): said as such, never sent.
      result = { status: null, error: `refused: ${(err as Error).message}`.slice(0, 300) };
    }
    const attempts = d.attempts + 1;
    const after = this.deps.now();
    if (result.error === null) {
      await finish({
        status: 'delivered',
        attempts,
        next_at: null,
        last_status: result.status,
        last_error: null,
        delivered_at: after.toISOString(),
      });
      return true;
    }
    const firstDue = new Date(Date.parse(d.event.at) + d.after_seconds * 1000).toISOString();
    const next = nextTry([firstDue, d.created_at].sort().at(-1)!, attempts, after, config.retryForMs);
    await finish({
      status: next === null ? 'dead' : 'pending',
      attempts,
      next_at: next,
      last_status: result.status,
      last_error: result.error,
    });
    return true;
  }

  /** Why a held state's delivery is no longer true (the state ended), or null when it still holds. */
  private async stateEnded(d: AlertDelivery): Promise<string | null> {
    const data = d.event.data;
    if (d.kind === 'work.unknown') {
      const item = await this.deps.state.getWork(d.tenant, String(data.work_id));
      if (!item) return 'the work item is gone';
      if (item.state === 'stopped') return `the work was stopped before ${d.after_seconds} s had passed`;
      if (item.lease_expires_at !== data.lease_expired_at)
        return `the lease was renewed before ${d.after_seconds} s had passed`;
      return null;
    }
    if (!d.sid) return null;
    const status = await this.deps.state.getStatus(d.tenant, d.sid);
    const last = status?.reports.at(-1);
    if (!status || !last) return 'the session has no status';
    if (last.state !== data.state)
      return `the session left ${String(data.state)} (now ${last.state}) before ${d.after_seconds} s had passed`;
    if (status.state_since !== undefined && status.state_since !== data.since)
      return `the session left ${String(data.state)} and came back before ${d.after_seconds} s had passed`;
    return null;
  }

  private async slackGap(target: AlertTarget): Promise<void> {
    const key = `${target.tenant}/${target.id}`;
    const last = this.lastSlack.get(key);
    const wait = last === undefined ? 0 : last + SLACK_GAP_MS - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    this.lastSlack.set(key, Date.now());
  }
}

/** Due deliveries by target (`tenant/id`), each target's in the order listed. */
function groupByTarget(ds: AlertDelivery[]): Map<string, AlertDelivery[]> {
  const out = new Map<string, AlertDelivery[]>();
  for (const d of ds) {
    const k = `${d.tenant}/${d.target_id}`;
    const list = out.get(k);
    if (list) list.push(d);
    else out.set(k, [d]);
  }
  return out;
}
