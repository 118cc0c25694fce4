/**
 * `POST /v1/sessions/{sid}/writers/{w}/chunks?offset=N`: the next complete lines of a writer's segment
 * (DESIGN §4). The body is raw NDJSON bytes, read within the deployment's chunk limit (one byte past it at
 * most, enough for the verb to refuse it and name the line), never parsed as JSON here.
 */
import { z } from 'zod';
import { resolveLimits } from '../../../contract/limits.js';
import { ingestChunk, MAX_CHUNK_BYTES } from '../../../service/ingest/ingest-chunk.js';
import { IngestAnswer } from '../../../service/sessions/schemas.js';
import { boundedBody, Offset, WriterPath } from '../../params.js';
import { defineRoute, json, raw, SESSION, WRITE_FAULTS } from '../../route.js';

export const postChunk = defineRoute({
  route: {
    method: 'post',
    path: '/v1/sessions/{sid}/writers/{w}/chunks',
    operationId: 'postChunk',
    tags: ['ingest'],
    summary: "Append the next complete lines of a writer's segment",
    description: [
      'The body starts at byte `offset` of the segment. `offset` equal to the stored length appends (201);',
      'a body equal to the stored bytes at an earlier `offset` is a retry and gets the same answer (200);',
      'anything else is `offset_mismatch` (409) with `details.expected_offset`.',
      'Line 1 of a new segment must be the `writer.start` of this session and writer; a line naming another',
      'session or writer is refused. Anything else is stored as written: a torn or malformed line in the',
      'middle is kept, the merged replay skips it. A refused chunk stores nothing: 413 for a body over the',
      "size limit, of more lines than the deployment's limit (`too_many_lines`), or past the tenant's",
      'storage quota (`quota_exceeded`).',
    ].join(' '),
    request: { params: WriterPath, query: z.object({ offset: Offset }) },
    responses: {
      200: json('a retry of a chunk already accepted: the same answer', IngestAnswer),
      201: json('appended', IngestAnswer),
    },
  },
  auth: 'bearer',
  scopes: ['ingest'],
  body: {
    contentType: 'application/x-ndjson',
    schema: raw(
      `complete lines of the v3 log format, each ending with a newline; at most ${MAX_CHUNK_BYTES} bytes`,
    ),
  },
  errors: [
    'bad_request',
    'empty_body',
    'incomplete_line',
    'missing_writer_start',
    'misrouted_line',
    ...SESSION,
    'offset_mismatch',
    'payload_too_large',
    'too_many_lines',
    'quota_exceeded',
    ...WRITE_FAULTS,
    'storage_layout',
    'data_loss',
  ],
  handler: async (c) => {
    const { sid, w } = c.req.valid('param');
    const { offset } = c.req.valid('query');
    const ctx = c.get('ctx');
    // The deployment's chunk limit (5 MiB at most; 4 MiB behind API Gateway): `GET /healthz` tells clients.
    const body = await boundedBody(c, resolveLimits(ctx.limits).maxChunkBytes);
    const { created, ...answer } = await ingestChunk({ ctx, input: { sid, w, offset, body } });
    return created ? c.json(answer, 201) : c.json(answer, 200);
  },
});
