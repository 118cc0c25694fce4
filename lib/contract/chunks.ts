/**
 * A writer's acknowledged chunks as `GET /v1/sessions/{sid}/writers/{w}/chunks` answers them (issue 15
 * item 1): the server lists them (lib/service/ingest/list-chunks.ts), an upload hashes the same byte
 * ranges of its file and compares (lib/client/api/upload-digests.ts).
 */
import { z } from 'zod';
import { Count } from './ids.js';

/** The most chunk records one page holds, and the default. */
export const MAX_CHUNKS_PAGE = 1000;

/** One acknowledged chunk. */
export const ChunkView = z
  .object({
    offset: Count.describe('byte offset of its first byte in the segment'),
    length: Count.describe('its bytes'),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe('SHA-256 of its bytes, lowercase hex'),
    lines: Count.describe("the segment's line count after it"),
    last_seq: z.int().nullable().describe('the seq of the last complete event after it'),
  })
  .meta({ id: 'ChunkView', description: 'an acknowledged chunk of a segment and its digest' });

/** A page of `ChunkView`s. */
export const ChunkList = z
  .object({
    chunks: z.array(ChunkView).describe('by offset'),
    next_from: Count.nullable().describe('the `from` of the next page, null on the last page'),
  })
  .meta({ id: 'ChunkList', description: "a page of a writer's acknowledged chunks" });
export type ChunkList = z.infer<typeof ChunkList>;
