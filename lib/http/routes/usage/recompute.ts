/**
 * `POST /v1/usage/recompute[?sid=]` (scope admin): the usage counters made again from the stored segments,
 * for one session or every session of the tenant (after a change of prices or counting rules).
 */
import { z } from 'zod';
import { SessionId } from '../../../contract/ids.js';
import { recomputeUsage } from '../../../service/usage/recompute.js';
import { UsageRecomputeSchema } from '../../../service/usage/schemas.js';
import { readWholeSession } from '../../replay-slots.js';
import { AUTHED, defineRoute, json, WRITE_FAULTS } from '../../route.js';

export const recomputeUsageRoute = defineRoute({
  route: {
    method: 'post',
    path: '/v1/usage/recompute',
    operationId: 'recomputeUsage',
    tags: ['usage'],
    summary: 'Recompute usage counters from the stored segments',
    description: [
      "Folds each writer's segment again with this server's counting rules and prices and moves the",
      'counters by what changed (nothing, when nothing did). Without `sid`, every session of the tenant:',
      'that reads every byte the tenant stores.',
    ].join(' '),
    request: {
      query: z.object({ sid: SessionId.optional().describe('only this session') }),
    },
    responses: { 200: json('what the recompute changed', UsageRecomputeSchema) },
  },
  auth: 'bearer',
  scopes: ['admin'],
  errors: [
    'bad_request',
    ...AUTHED,
    'not_found',
    'conflict',
    'too_many_replays',
    'data_loss',
    ...WRITE_FAULTS,
  ],
  // It reads whole sessions: a replay slot of the token and a place in the scan gate, like verify.
  handler: async (c) => {
    const { sid } = c.req.valid('query');
    return c.json(await readWholeSession(c, sid ?? '', ({ ctx }) => recomputeUsage({ ctx, sid })), 200);
  },
});
