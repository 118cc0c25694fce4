/**
 * What the session verbs answer (DESIGN §4): a writer's index (`getWriter`, and `ingestChunk` after a
 * chunk), a session's index entry (`listSessions`, `getSession`). The verbs' return types are these
 * schemas' `z.infer`; the OpenAPI document names each by its `id`.
 */
import { z } from 'zod';
import { Count, Instant, SessionId, WriterId } from '../../contract/ids.js';

/** The answer to an accepted chunk (201 appended, 200 a retry of an accepted chunk). */
export const IngestAnswer = z
  .object({
    writer: WriterId,
    length: Count.describe("bytes stored of the writer's segment: the offset of the next chunk"),
    lines: Count.describe('lines stored of the segment'),
    last_seq: z.int().nullable().describe('the seq of the last complete event stored, null before one'),
  })
  .meta({ id: 'IngestAnswer', description: "the writer's index after the chunk" });
export type IngestAnswer = z.infer<typeof IngestAnswer>;

/**
 * `GET /v1/sessions/{sid}/replay` of a session over the deployment's inline size (issue 17.2): 303 when
 * its stored copy is ready (`replay`), 202 while it is being merged (`retry_after`).
 */
export const StoredReplayAnswer = z
  .object({
    status: z.enum(['ready', 'building']).describe('ready: fetch `replay.url`; building: ask again later'),
    session_bytes: Count.describe("the session's size: its writers' stored lengths summed"),
    replay: z
      .object({
        url: z.string().describe('GETs the replay without a token, until expires_at'),
        bytes: Count.describe('bytes of the stored replay'),
        expires_at: Instant.describe('when the URL stops working: ask the replay route again for a new one'),
      })
      .optional(),
    retry_after: z.int().min(1).optional().describe('seconds to wait before asking again (building)'),
  })
  .meta({
    id: 'StoredReplayAnswer',
    description: 'where the replay of a large session is, or when it will be',
  });
export type StoredReplayAnswer = z.infer<typeof StoredReplayAnswer>;

/** `GET /v1/sessions/{sid}/writers/{w}`. */
export const WriterView = z
  .object({
    writer: WriterId,
    length: Count.describe("bytes stored of the writer's segment"),
    lines: Count.describe('lines stored of the segment'),
    last_seq: z.int().nullable().describe('the seq of the last complete event stored'),
    ended: z.boolean().describe('a writer.end is stored'),
    agent: z.string().nullable().describe('meta.agent of its writer.start, when it had one'),
    updated_at: Instant.describe('when a chunk of it was last stored'),
    digest: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .nullable()
      .optional()
      .describe(
        "the chained SHA-256 of the segment's stored chunks (lib/audit/chain.ts nextChain, from 64 zeros): what an upload compares its file's prefix with; null for a writer stored before digests were kept, until its next chunk",
      ),
  })
  .meta({ id: 'WriterView', description: "what is stored of one writer's segment" });
export type WriterView = z.infer<typeof WriterView>;

/** One entry of `GET /v1/sessions`. */
export const SessionView = z
  .object({
    sid: SessionId,
    created_at: Instant,
    updated_at: Instant.describe('the last time anything of it was ingested or reported'),
    writers: Count.describe('how many writers it has'),
    lines: Count.describe('lines stored, all writers'),
    bytes: Count.describe('bytes stored, all writers'),
  })
  .meta({ id: 'SessionView', description: "a session's index entry" });
export type SessionView = z.infer<typeof SessionView>;

/** `GET /v1/sessions`. */
export const SessionList = z
  .object({
    sessions: z.array(SessionView).describe('most recent activity first'),
    next: z.string().nullable().describe('the cursor of the next page, null on the last page'),
  })
  .meta({ id: 'SessionList' });
export type SessionList = z.infer<typeof SessionList>;

/** `GET /v1/sessions/{sid}`. */
export const SessionDetail = SessionView.omit({ writers: true })
  .extend({ writers: z.array(WriterView) })
  .meta({ id: 'SessionDetail', description: 'the session index entry with its writers' });
export type SessionDetail = z.infer<typeof SessionDetail>;
