import { type WorkView, WorkWait } from '../../contract/work.js';
import type { ServiceContext } from '../shared/context.js';
import { parseInput } from '../shared/errors.js';
import { requirePlainContent } from './content.js';
import { renew, write } from './write.js';

/**
 * `POST /v1/work/{id}/wait` (scope `report`): a typed dependency and a plain reason (history); state
 * `waiting`; the lease renewed (waiting is reported work, seed 004).
 * @throws AppError as `checkpointWork`
 */
export async function waitWork(args: {
  ctx: ServiceContext;
  id: string;
  input: unknown;
  idempotencyKey?: string | null;
}): Promise<WorkView> {
  const body = parseInput(WorkWait, args.input, 'the wait');
  requirePlainContent([
    ['reason', body.reason],
    ['dependency.ref', body.dependency.ref],
  ]);
  return (
    await write(args.ctx, args.id, body, 'wait', args.idempotencyKey ?? null, (item, now) => {
      item.state = 'waiting';
      item.waiting_on = { dependency: body.dependency, reason: body.reason, since: now };
      renew(args.ctx, item, now);
      return { dependency: body.dependency, reason: body.reason };
    })
  ).view;
}
