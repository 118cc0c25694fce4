/**
 * The schemas of the answers that are the HTTP layer's own: liveness, the error envelope and the OpenAPI
 * document. The verbs' answers are next to the verbs (lib/service/*-schemas.ts); every schema named with
 * `.meta({ id })` is a component of the document (./openapi.ts).
 */
import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../service/shared/errors.js';

/** `GET /healthz`. */
export const Health = z
  .object({
    ok: z.literal(true),
    version: z.string().describe('the server version'),
    limits: z
      .object({
        max_chunk_bytes: z.number().int().describe('the largest chunk body this deployment takes'),
        max_chunk_lines: z.number().int().describe('the most lines one chunk may hold'),
      })
      .describe('what clients size their chunks to'),
  })
  .meta({ id: 'Health' });

/** Every error code, as `ERROR_STATUS` lists them. */
export const ErrorCodeSchema = z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]);

/** Every error answer (DESIGN §4). */
export const ErrorBody = z
  .object({
    error: z.object({
      code: ErrorCodeSchema,
      message: z.string().min(1).describe('a sentence a person can act on'),
      details: z.record(z.string(), z.unknown()).describe('for a program; {} when there is nothing'),
    }),
  })
  .meta({ id: 'ErrorBody', description: 'an error: its code decides the status' });

/** `GET /v1/openapi.json`: the document itself, described loosely. */
export const OpenApiDocument = z
  .looseObject({ openapi: z.string(), info: z.looseObject({ title: z.string(), version: z.string() }) })
  .meta({ id: 'OpenApiDocument', description: 'an OpenAPI 3.1 document: this one' });
