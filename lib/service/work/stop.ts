import { WorkStop, type WorkView } from '../../contract/work.js';
import type { ServiceContext } from '../shared/context.js';
import { parseInput } from '../shared/errors.js';
import { requirePlainContent } from './content.js';
import { write } from './write.js';

/**
 * `POST /v1/work/{id}/stop` (scope `report`): ends the item `completed` or `paused` (history); its lease
 * ends now.
 * @throws AppError as `checkpointWork`
 */
export async function stopWork(args: {
  ctx: ServiceContext;
  id: string;
  input: unknown;
  idempotencyKey?: string | null;
}): Promise<WorkView> {
  const body = parseInput(WorkStop, args.input, 'the stop');
  requirePlainContent([['summary', body.summary]]);
  return (
    await write(args.ctx, args.id, body, 'stop', args.idempotencyKey ?? null, (item, now) => {
      item.state = 'stopped';
      item.outcome = body.outcome;
      item.waiting_on = null;
      if (body.summary) item.summary = body.summary;
      item.lease_expires_at = now;
      return { outcome: body.outcome, summary: body.summary };
    })
  ).view;
}
