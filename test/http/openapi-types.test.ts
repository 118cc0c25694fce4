/**
 * The zod schemas of the API's answers (lib/service/*-schemas.ts and lib/http/schemas.ts, the source of
 * /v1/openapi.json) against the TypeScript types the verbs and routes answer with. These are compile-time checks: `tsc --noEmit` (the
 * first step of `npm test`) fails when a schema and its type disagree; the vitest run only confirms the
 * file loads. The verbs keep their own types, and these checks keep the two equal (not merely assignable)
 * wherever the answer has a named type; answers a route builds inline are checked one way, the schema's
 * type assignable to what the route sends. Request bodies need no check: the document converts the very
 * schemas the verbs validate with (`StatusReport`, `CreateTokenInput`, `CreateSessionTokenInput`).
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { ErrorBody as ErrorBodyType } from '../../lib/http/errors.js';
import type { SessionSummary, TurnSummary, WriterSummary } from '../../lib/log/analyse/inspect.js';
import type { Problem, VerifyReport } from '../../lib/log/analyse/verify.js';
import type { Attribution } from '../../lib/log/replay/attribution.js';
import type { attributionStored } from '../../lib/service/analysis/verify.js';
import type { Board, BoardSession } from '../../lib/service/board/get.js';
import type { IngestResult } from '../../lib/service/ingest/ingest-chunk.js';
import type { getSession, listSessions, SessionView, WriterView } from '../../lib/service/sessions/replay.js';
import type { StatusView } from '../../lib/service/status/get.js';
import type { listTokens, publicToken } from '../../lib/service/tokens/create.js';
import type { TokenRecord } from '../../lib/store/index.js';
import type * as S from '../support/answer-schemas.js';

/** A type with every intersection flattened, all the way down, so that equal shapes compare equal. */
type Deep<T> = T extends object ? { [K in keyof T]: Deep<T[K]> } : T;
/** What a schema parses to, flattened. */
type Out<T extends z.ZodType> = Deep<z.output<T>>;

describe('the answer schemas and the types the verbs answer with', () => {
  it('agree exactly where the verb has a named type', () => {
    expectTypeOf<Out<typeof S.IngestAnswer>>().toEqualTypeOf<Deep<Omit<IngestResult, 'created'>>>();
    expectTypeOf<Out<typeof S.WriterView>>().toEqualTypeOf<Deep<WriterView>>();
    expectTypeOf<Out<typeof S.SessionView>>().toEqualTypeOf<Deep<SessionView>>();
    expectTypeOf<Out<typeof S.SessionList>>().toEqualTypeOf<Deep<Awaited<ReturnType<typeof listSessions>>>>();
    expectTypeOf<Out<typeof S.SessionDetail>>().toEqualTypeOf<Deep<Awaited<ReturnType<typeof getSession>>>>();
    expectTypeOf<Out<typeof S.StatusView>>().toEqualTypeOf<Deep<StatusView>>();
    expectTypeOf<Out<typeof S.BoardSession>>().toEqualTypeOf<Deep<BoardSession>>();
    expectTypeOf<Out<typeof S.Board>>().toEqualTypeOf<Deep<Board>>();
    expectTypeOf<Out<typeof S.TokenView>>().toEqualTypeOf<Deep<ReturnType<typeof publicToken>>>();
    expectTypeOf<Out<typeof S.TokenList>>().toEqualTypeOf<
      Deep<{ tokens: Awaited<ReturnType<typeof listTokens>> }>
    >();
    expectTypeOf<Out<typeof S.CreatedToken>>().toEqualTypeOf<
      Deep<{ token: string } & ReturnType<typeof publicToken>>
    >();
    expectTypeOf<Out<typeof S.VerifyProblem>>().toEqualTypeOf<Deep<Problem>>();
    expectTypeOf<Out<typeof S.VerifyReport>>().toEqualTypeOf<Deep<VerifyReport>>();
    expectTypeOf<Out<typeof S.WriterSummary>>().toEqualTypeOf<Deep<WriterSummary>>();
    expectTypeOf<Out<typeof S.TurnSummary>>().toEqualTypeOf<Deep<TurnSummary>>();
    expectTypeOf<Out<typeof S.SessionSummary>>().toEqualTypeOf<Deep<SessionSummary>>();
    expectTypeOf<Out<typeof S.Attribution>>().toEqualTypeOf<Deep<Attribution>>();
    expectTypeOf<Out<typeof S.AttributionList>>().toEqualTypeOf<
      Deep<Awaited<ReturnType<typeof attributionStored>>>
    >();
    expectTypeOf<Out<typeof S.ErrorBody>>().toEqualTypeOf<Deep<ErrorBodyType>>();
  });

  it('agree one way where the route builds the answer inline', () => {
    // POST /v1/sessions/{sid}/tokens answers `{ token, id, scopes, session, expires_at }` of the record;
    // the schema is narrower (the session and the expiry are never null there).
    expectTypeOf<Out<typeof S.SessionToken>>().toExtend<
      Deep<{ token: string } & Pick<TokenRecord, 'id' | 'scopes' | 'session' | 'expires_at'>>
    >();
    expectTypeOf<Out<typeof S.Health>>().toEqualTypeOf<{
      ok: true;
      version: string;
      limits: { max_chunk_bytes: number; max_chunk_lines: number };
    }>();
  });
});
