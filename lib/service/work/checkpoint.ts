import { WorkCheckpoint, type WorkView } from '../../contract/work.js';
import type { ServiceContext } from '../shared/context.js';
import { parseInput } from '../shared/errors.js';
import { requirePlainContent } from './content.js';
import { renew, write } from './write.js';

/**
 * `POST /v1/work/{id}/checkpoint` (scope `report`): a change of mode, subject or summary (history); back to
 * `active` when it was waiting; the lease renewed.
 * @throws AppError as `heartbeatWork`, and `content_rule` (422), `idempotency_mismatch` (409)
 */
export async function checkpointWork(args: {
  ctx: ServiceContext;
  id: string;
  input: unknown;
  idempotencyKey?: string | null;
}): Promise<WorkView> {
  const body = parseInput(WorkCheckpoint, args.input, 'the checkpoint');
  requirePlainContent([
    ['summary', body.summary],
    ['subject', body.subject?.ref],
  ]);
  return (
    await write(args.ctx, args.id, body, 'checkpoint', args.idempotencyKey ?? null, (item, now) => {
      if (body.mode) item.mode = body.mode;
      if (body.subject) item.subject = body.subject;
      if (body.summary) item.summary = body.summary;
      item.state = 'active';
      item.waiting_on = null;
      renew(args.ctx, item, now);
      return { mode: body.mode, subject: body.subject, summary: body.summary };
    })
  ).view;
}
