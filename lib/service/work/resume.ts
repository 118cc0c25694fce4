import { WorkResume, type WorkView } from '../../contract/work.js';
import type { ServiceContext } from '../shared/context.js';
import { AppError, parseInput } from '../shared/errors.js';
import { checkpointWork } from './checkpoint.js';
import { stopWork } from './stop.js';
import { waitWork } from './wait.js';

/**
 * `POST /v1/work/{id}/resume` (scope `report`): a pending semantic operation repeated exactly: applied
 * already with that key, the item as it is; not yet, applied now; the key with other content, refused.
 * A pending start is resumed with `POST /v1/work` and its key (the id is not known before it).
 * @throws AppError as the operation's verb; `bad_request` for a start
 */
export async function resumeWork(args: {
  ctx: ServiceContext;
  id: string;
  input: unknown;
}): Promise<WorkView> {
  const r = parseInput(WorkResume, args.input, 'the resume');
  const owner = { session: r.session, system: r.system, actor: r.actor };
  const input = { ...r.body, ...owner };
  const common = { ctx: args.ctx, id: args.id, input, idempotencyKey: r.idempotency_key };
  switch (r.op) {
    case 'checkpoint':
      return checkpointWork(common);
    case 'wait':
      return waitWork(common);
    case 'stop':
      return stopWork(common);
    default:
      throw new AppError(
        'bad_request',
        'a pending start is resumed by sending it again to POST /v1/work with its Idempotency-Key',
      );
  }
}
