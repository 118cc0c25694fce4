/**
 * The API's description (issue 5), without auth: `GET /openapi.json` (the OpenAPI document) and
 * `GET /docs` (the reference page), mounted under `/v1`. The document is built once, on first use.
 */
import { Hono } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import type { AppEnv } from '../auth.js';
import { DocsPage } from '../docs-page.js';
import { buildOpenApi, type Json } from '../openapi.js';
import { OPERATIONS } from '../operations.js';

export function docsRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  let doc: Json | null = null;
  const document = () => {
    doc ??= buildOpenApi(OPERATIONS);
    return doc;
  };

  r.get('/openapi.json', (c) => {
    // Public and credential-free, so any origin may read it (an API explorer in another tab).
    c.header('access-control-allow-origin', '*');
    return c.json(document());
  });

  r.get(
    '/docs',
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'none'"],
        styleSrc: ["'unsafe-inline'"],
        frameAncestors: ["'none'"],
      },
      referrerPolicy: 'no-referrer',
    }),
    (c) => c.html(<DocsPage doc={document()} />),
  );
  return r;
}
