/**
 * `GET /v1/sessions/{sid}/usage[?by=turn|writer|agent|person|model|day&from=&to=]`: a session's token usage and
 * list-price cost (issue 27), from the counters kept as its chunks arrived; `by=turn` reads the session.
 */
import { z } from 'zod';
import { GROUP_BY } from '../../../log/analyse/usage/index.js';
import { getSessionUsage } from '../../../service/usage/get.js';
import { SessionUsageSchema } from '../../../service/usage/schemas.js';
import { SessionPath } from '../../params.js';
import { clientSignal, readWholeSession } from '../../replay-slots.js';
import { defineRoute, json, SESSION } from '../../route.js';

export const getSessionUsageRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/sessions/{sid}/usage',
    operationId: 'getSessionUsage',
    tags: ['usage'],
    summary: "A session's token usage and list-price cost",
    description: [
      'Totals from the usage records kept as the chunks arrived (exact), by model, and grouped by `by`.',
      'Costs are list-price equivalents from `price_data`; `unknown_turns` counts turns no usage was',
      'reported for (the totals are a lower bound then). `by=turn` reads the whole session (a replay slot).',
    ].join(' '),
    request: {
      params: SessionPath,
      // strict: a parameter of the other usage route (`group_by` here, `by` there) is a 400, not ignored
      query: z.strictObject({
        by: z.enum(GROUP_BY).optional().describe('group by turn, writer, agent, person, model or day'),
        from: z.string().optional().describe('only usage from this UTC day on (ISO 8601 date or date-time)'),
        to: z.string().optional().describe('only usage up to this UTC day, inclusive'),
      }),
    },
    responses: { 200: json("the session's usage", SessionUsageSchema) },
  },
  auth: 'bearer',
  scopes: ['read', 'board'],
  errors: ['bad_request', ...SESSION, 'too_many_replays', 'data_loss'],
  handler: async (c) => {
    const sid = c.req.valid('param').sid;
    const { by, from, to } = c.req.valid('query');
    if (by === 'turn')
      return c.json(await readWholeSession(c, sid, (r) => getSessionUsage({ ...r, by, from, to })), 200);
    return c.json(
      await getSessionUsage({ ctx: c.get('ctx'), sid, by, from, to, signal: clientSignal(c) }),
      200,
    );
  },
});
