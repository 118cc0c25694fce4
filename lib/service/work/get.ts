import type { WorkView } from '../../contract/work.js';
import { requireScope, type ServiceContext } from '../shared/context.js';
import { notFound } from '../shared/errors.js';
import { workView } from './view.js';

/** `GET /v1/work/{id}` (scope `read`, `board` or `report`). @throws AppError `not_found` */
export async function getWork({ ctx, id }: { ctx: ServiceContext; id: string }): Promise<WorkView> {
  requireScope(ctx, 'read', 'board', 'report');
  const item = await ctx.state.getWork(ctx.tenant, id);
  if (!item || (ctx.caller.session !== null && ctx.caller.session !== item.session)) throw notFound('work');
  return workView(item, ctx.now());
}
