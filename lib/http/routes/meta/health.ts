/** `GET /healthz`: liveness, and the chunk limits clients size their uploads to (the CLI's upload reads it). */
import { resolveLimits } from '../../../contract/limits.js';
import { HANSARD_VERSION } from '../../../version.js';
import { defineRoute, json } from '../../route.js';
import { Health } from '../../schemas.js';

export const health = defineRoute({
  route: {
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    tags: ['meta'],
    summary: 'Liveness',
    responses: { 200: json('the server is up', Health) },
  },
  auth: 'none',
  handler: (c) => {
    const limits = resolveLimits(c.get('services').deps.limits);
    return c.json(
      {
        ok: true as const,
        version: HANSARD_VERSION,
        limits: { max_chunk_bytes: limits.maxChunkBytes, max_chunk_lines: limits.maxChunkLines },
      },
      200,
    );
  },
});
