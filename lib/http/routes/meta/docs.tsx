/**
 * `GET /v1/docs`: the API reference, the OpenAPI document rendered on the server (../../docs-page.tsx), no
 * script, under a CSP that allows nothing but its inline styles (docs/adr/0006 says why not a client-side
 * renderer).
 */
import { secureHeaders } from 'hono/secure-headers';
import { DocsPage } from '../../docs-page.js';
import { defineRoute, page } from '../../route.js';

export const docs = defineRoute({
  route: {
    method: 'get',
    path: '/v1/docs',
    operationId: 'docs',
    tags: ['meta'],
    summary: 'The API reference',
    description: 'This document rendered as an HTML page.',
    middleware: secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'none'"],
        styleSrc: ["'unsafe-inline'"],
        frameAncestors: ["'none'"],
      },
      referrerPolicy: 'no-referrer',
    }),
    responses: { 200: page('the API reference') },
  },
  auth: 'none',
  handler: (c) => c.html(<DocsPage doc={c.get('services').document()} />),
});
