/**
 * `GET /assets/{name}`: the scripts the board's pages load (htmx, its SSE extension, ours; see
 * lib/board/assets.ts). Public (they hold nothing of a tenant's) and cached for a year as `immutable`
 * when asked with their content hash (`?v=`, the URL the pages link); without it, for five minutes.
 */
import { z } from 'zod';
import { getAsset } from '../../../board/assets.js';
import { AppError } from '../../../service/shared/errors.js';
import { defineRoute, raw } from '../../route.js';

export const assetRoute = defineRoute({
  route: {
    method: 'get',
    path: '/assets/{name}',
    operationId: 'boardAsset',
    tags: ['board pages'],
    summary: "A script of the board's pages",
    request: {
      params: z.object({ name: z.string().max(64).describe('htmx.min.js, sse.min.js or board.js') }),
      query: z.object({ v: z.string().max(64).optional().describe('the content hash the pages link') }),
    },
    responses: {
      200: {
        description: 'the script',
        content: { 'text/javascript': { schema: raw('JavaScript') } },
      },
    },
  },
  auth: 'none',
  errors: ['not_found'],
  handler: (c) => {
    const asset = getAsset(c.req.valid('param').name);
    if (!asset)
      throw new AppError('not_found', 'no such asset: the board loads htmx.min.js, sse.min.js and board.js');
    const { v } = c.req.valid('query');
    c.header('Content-Type', asset.type);
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('ETag', `"${asset.hash}"`);
    c.header(
      'Cache-Control',
      v === asset.hash ? 'public, max-age=31536000, immutable' : 'public, max-age=300',
    );
    if (c.req.header('if-none-match') === `"${asset.hash}"`) return c.body(null, 304);
    return c.body(asset.body, 200);
  },
});
