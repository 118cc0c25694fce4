import { WorkHeartbeat, type WorkView } from '../../contract/work.js';
import type { ServiceContext } from '../shared/context.js';
import { parseInput } from '../shared/errors.js';
import { plusSeconds, write } from './write.js';

/**
 * `POST /v1/work/{id}/heartbeat` (scope `report`): renews the lease only (no history entry).
 * @throws AppError `not_found`, `not_owner` (403), `work_mismatch` (409), `work_stopped` (409)
 */
export async function heartbeatWork(args: {
  ctx: ServiceContext;
  id: string;
  input: unknown;
}): Promise<WorkView> {
  const body = parseInput(WorkHeartbeat, args.input, 'the heartbeat');
  return (
    await write(args.ctx, args.id, body, null, null, (item, now) => {
      const ttl = body.ttl_seconds ?? item.ttl_seconds;
      item.lease_expires_at = plusSeconds(args.ctx, ttl);
      item.last_heartbeat_at = now;
    })
  ).view;
}
