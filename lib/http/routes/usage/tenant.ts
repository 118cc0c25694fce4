/** `GET /v1/usage?group_by=&from=&to=`: a tenant's token usage and list-price cost by day, agent, person or model. */
import { z } from 'zod';
import { TENANT_GROUP_BY, TenantUsageSchema } from '../../../service/usage/schemas.js';
import { getTenantUsage } from '../../../service/usage/tenant.js';
import { AUTHED, defineRoute, json } from '../../route.js';

export const getTenantUsageRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/usage',
    operationId: 'getTenantUsage',
    tags: ['usage'],
    summary: "The tenant's token usage and list-price cost",
    description: [
      "From the tenant's usage buckets (UTC day, agent, person, model), kept as chunks arrive: no",
      'transcript is read. Default range: this month up to today; at most 366 days. With a monthly',
      'budget set, `budget` says how much of it this month used and which levels (80, 100) it crossed.',
    ].join(' '),
    request: {
      // strict: a parameter of the other usage route (`group_by` here, `by` there) is a 400, not ignored
      query: z.strictObject({
        group_by: z.enum(TENANT_GROUP_BY).optional().describe('day (default), agent, person or model'),
        from: z
          .string()
          .optional()
          .describe('first day, ISO 8601 (2026-12-01 or a date-time, UTC); default the 1st of this month'),
        to: z.string().optional().describe('last day, inclusive, ISO 8601; default today'),
      }),
    },
    responses: { 200: json("the tenant's usage", TenantUsageSchema) },
  },
  auth: 'bearer',
  scopes: ['read'],
  errors: ['bad_request', ...AUTHED],
  handler: async (c) => {
    const q = c.req.valid('query');
    return c.json(
      await getTenantUsage({ ctx: c.get('ctx'), groupBy: q.group_by, from: q.from, to: q.to }),
      200,
    );
  },
});
