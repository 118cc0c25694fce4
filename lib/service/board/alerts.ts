/**
 * The board's alerts page (issue 28 item 5, `GET /alerts`): each alert target of the tenant with its last
 * deliveries and how many of its recent deliveries ended as dead letters. Built from the alert verbs
 * (lib/service/alerts/targets.ts), so it needs what they need: the `admin` scope.
 */
import type { AlertDeliveryView, AlertTargetView } from '../../contract/alerts.js';
import { listTargets, targetDeliveries } from '../alerts/targets.js';
import type { ServiceContext } from '../shared/context.js';
import { AppError } from '../shared/errors.js';

/** Deliveries a target shows on the page, newest first. */
export const BOARD_DELIVERIES = 10;
/** Deliveries a target's dead letters are counted among (the store lists at most 200 at a time). */
export const DEAD_WINDOW = 200;

/** One target as the page shows it. */
export interface BoardAlertTarget {
  target: AlertTargetView;
  /** its last `BOARD_DELIVERIES` deliveries, newest first */
  deliveries: AlertDeliveryView[];
  /** dead letters among its last `DEAD_WINDOW` deliveries */
  dead: number;
  /** whether it has more than `DEAD_WINDOW` deliveries (then `dead` counts the recent ones only) */
  windowFull: boolean;
}

/** What `GET /alerts` shows. */
export interface BoardAlerts {
  targets: BoardAlertTarget[];
  /** when it was read (ISO 8601): ages on the page are relative to it */
  now: string;
}

/**
 * The tenant's targets, oldest first, each with its last deliveries and dead-letter count: one listing of
 * at most `DEAD_WINDOW` deliveries per target (`MAX_TARGETS` targets at most).
 * @throws AppError `forbidden` without the `admin` scope
 */
export async function boardAlerts(ctx: ServiceContext): Promise<BoardAlerts> {
  const targets = await listTargets(ctx);
  const out = await Promise.all(
    targets.map(async (target): Promise<BoardAlertTarget | null> => {
      let recent: AlertDeliveryView[];
      try {
        recent = await targetDeliveries(ctx, target.id, DEAD_WINDOW);
      } catch (err) {
        // removed since it was listed: left out, as the next load would
        if (err instanceof AppError && err.code === 'not_found') return null;
        throw err;
      }
      return {
        target,
        deliveries: recent.slice(0, BOARD_DELIVERIES),
        dead: recent.filter((d) => d.status === 'dead').length,
        windowFull: recent.length >= DEAD_WINDOW,
      };
    }),
  );
  return { targets: out.filter((t) => t !== null), now: ctx.now().toISOString() };
}
