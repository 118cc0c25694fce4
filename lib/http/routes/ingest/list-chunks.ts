/** `GET /v1/sessions/{sid}/writers/{w}/chunks?from=&limit=`: the digests of a writer's acknowledged chunks. */
import { z } from 'zod';
import { ChunkList, MAX_CHUNKS_PAGE } from '../../../contract/chunks.js';
import { listWriterChunks } from '../../../service/ingest/list-chunks.js';
import { WriterPath } from '../../params.js';
import { defineRoute, json, SESSION } from '../../route.js';

// Digits only, as for offsets and limits elsewhere: `z.coerce` would read '0x10' as 16.
const From = z
  .string()
  .regex(/^\d{1,16}$/, 'from is a byte offset: a whole number')
  .transform(Number)
  .pipe(z.number().int().max(Number.MAX_SAFE_INTEGER))
  .optional()
  .transform((v) => v ?? 0)
  .describe(
    'the byte offset to list from (a chunk offset, or the `next_from` of the previous page); default 0',
  );
const ChunkLimit = z
  .string()
  .regex(/^\d{1,4}$/, `a limit is a whole number from 1 to ${MAX_CHUNKS_PAGE}`)
  .transform(Number)
  .pipe(z.number().int().min(1).max(MAX_CHUNKS_PAGE))
  .optional()
  .transform((v) => v ?? MAX_CHUNKS_PAGE)
  .describe(`how many chunks to answer, 1 to ${MAX_CHUNKS_PAGE} (default ${MAX_CHUNKS_PAGE})`);

export const listChunksRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/sessions/{sid}/writers/{w}/chunks',
    operationId: 'listChunks',
    tags: ['ingest'],
    summary: "The digests of a writer's acknowledged chunks",
    description: [
      'Each chunk the server acknowledged, by offset, with the SHA-256 of its bytes. A client hashes the',
      'same ranges of its file before it appends, so that a changed byte of what it uploaded is found.',
    ].join(' '),
    request: { params: WriterPath, query: z.object({ from: From, limit: ChunkLimit }) },
    responses: { 200: json("a page of the writer's chunks", ChunkList) },
  },
  auth: 'bearer',
  scopes: ['ingest', 'read'],
  errors: ['bad_request', ...SESSION],
  handler: async (c) => {
    const { from, limit } = c.req.valid('query');
    return c.json(await listWriterChunks({ ctx: c.get('ctx'), ...c.req.valid('param'), from, limit }), 200);
  },
});
