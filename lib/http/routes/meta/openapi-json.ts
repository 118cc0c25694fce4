/** `GET /v1/openapi.json`: this API's OpenAPI document, without auth (lib/http/openapi.ts builds it). */
import type { z } from 'zod';
import { defineRoute, json } from '../../route.js';
import { OpenApiDocument } from '../../schemas.js';

export const openapiJson = defineRoute({
  route: {
    method: 'get',
    path: '/v1/openapi.json',
    operationId: 'openapi',
    tags: ['meta'],
    summary: 'This OpenAPI document',
    description: 'Generated from the zod schemas the routes validate with.',
    responses: { 200: json('the OpenAPI 3.1 document', OpenApiDocument) },
  },
  auth: 'none',
  handler: (c) => {
    // Public and credential-free, so any origin may read it (an API explorer in another tab).
    c.header('access-control-allow-origin', '*');
    return c.json(c.get('services').document() as z.infer<typeof OpenApiDocument>, 200);
  },
});
