/** `GET /v1/sessions/{sid}/writers/{w}`: what is stored of a writer, where an upload resumes. */

import { getWriter } from '../../../service/sessions/replay.js';
import { WriterView } from '../../../service/sessions/schemas.js';
import { WriterPath } from '../../params.js';
import { defineRoute, json, SESSION } from '../../route.js';

export const getWriterRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/sessions/{sid}/writers/{w}',
    operationId: 'getWriter',
    tags: ['ingest'],
    summary: 'What is stored of a writer',
    description: 'Where a client resumes an upload: `length` is the offset of the next chunk.',
    request: { params: WriterPath },
    responses: { 200: json("the writer's index entry", WriterView) },
  },
  auth: 'bearer',
  scopes: ['ingest', 'read'],
  errors: [...SESSION, 'data_loss', 'storage_layout'],
  handler: async (c) => c.json(await getWriter({ ctx: c.get('ctx'), ...c.req.valid('param') }), 200),
});
