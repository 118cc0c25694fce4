/**
 * The digester loop of a long-running server (`hansard serve`, issue 15.2): every tick, one pass of
 * `writeDueDigests`. A pass never overlaps the next; `stop()` waits for the pass under way, so the stores
 * can be closed after it. On AWS a scheduled function runs the same pass (functions/digest.ts).
 */
import { DIGESTER_TICK_MS } from '../shared/audit-config.js';
import type { DigestDeps } from './deps.js';
import { type DueDigestsResult, type DuePassHooks, writeDueDigests } from './write.js';

/** How long the same failure line is not logged again, in ms. */
export const REPEAT_LOG_MS = 10 * 60_000;

/** The longest a failing session waits between tries in one process, in ms. */
export const BACKOFF_MAX_MS = 5 * 60_000;

/** Sessions attested per pass at most (the rest are due still and come next pass, earliest first). */
export const DIGESTER_BATCH = 100;

export interface Digester {
  /** Stops ticking and resolves once the pass under way (if any) has ended. */
  stop(): Promise<void>;
  /** Runs a pass now (after the one under way); for tests and a clean stop. */
  runOnce(): Promise<DueDigestsResult | null>;
}

/**
 * Starts the loop: the first pass after `tickMs`, then `tickMs` after each pass ends.
 * @param deps.log where failures go: one line per session (no stack), one for a failed pass
 */
export function startDigester(deps: DigestDeps, tickMs = DIGESTER_TICK_MS, batch = DIGESTER_BATCH): Digester {
  const out = deps.log ?? ((line: string) => console.error(line));
  // A session that keeps failing the same way (KMS down, a damaged index) is tried at every pass, but its
  // line is logged once per REPEAT_LOG_MS, not every 5 s.
  const said = new Map<string, number>();
  const log = (line: string) => {
    const at = Date.now();
    const last = said.get(line);
    if (last !== undefined && at - last < REPEAT_LOG_MS) return;
    if (said.size > 10_000) said.clear();
    said.set(line, at);
    out(line);
  };
  // A session that failed waits 1, 2, 4 … passes (at most BACKOFF_MAX_MS) before it is tried again, and
  // each pass lists that many more, so failing sessions (the earliest due) cannot take every place of a
  // pass while the others wait.
  const backoff = new Map<string, { until: number; delayMs: number }>();
  const hooks: DuePassHooks = {
    defer: (tenant, sid) => (backoff.get(`${tenant}/${sid}`)?.until ?? 0) > deps.now().getTime(),
    settled: (tenant, sid, ok) => {
      const key = `${tenant}/${sid}`;
      if (ok) {
        backoff.delete(key);
        return;
      }
      const delayMs = Math.min((backoff.get(key)?.delayMs ?? tickMs / 2) * 2, BACKOFF_MAX_MS);
      if (backoff.size >= 10_000) backoff.clear();
      backoff.set(key, { until: deps.now().getTime() + delayMs, delayMs });
    },
  };
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<DueDigestsResult | null> = Promise.resolve(null);

  const pass = (): Promise<DueDigestsResult | null> => {
    running = running.then(async () => {
      try {
        return await writeDueDigests({ ...deps, log }, deps.now(), batch + backoff.size, hooks);
      } catch (err) {
        log(
          `hansard: the digester could not list the sessions due a digest: ${err instanceof Error ? err.message : String(err)}`,
        );
        return null;
      }
    });
    return running;
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      void pass().then(schedule);
    }, tickMs);
    timer.unref();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
    },
    runOnce: pass,
  };
}
