/**
 * The parts the API's schemas are made of (DESIGN §3 ids): typed ids, instants and counts. The routes
 * validate path parameters with the ids (`lib/http/params.ts`), and the verbs' answer schemas
 * (`*-schemas.ts` here) are built from all of them.
 */
import { z } from 'zod';
import { ULID_SOURCE as ulid } from '../log/format/ids.js';

/** `s_` + a ULID. */
export const SessionId = z
  .string()
  .regex(new RegExp(`^s_${ulid}$`), 'a session id is s_ followed by a ULID')
  .describe('a session id: s_ followed by a ULID');
/** `w_` + a ULID. */
export const WriterId = z
  .string()
  .regex(new RegExp(`^w_${ulid}$`), 'a writer id is w_ followed by a ULID')
  .describe("a writer id: w_ followed by a ULID; one writer's segment of a session");
/** `tok_` + a ULID: a token's id, never its secret. */
export const TokenId = z
  .string()
  .regex(new RegExp(`^tok_${ulid}$`), 'a token id is tok_ followed by a ULID')
  .describe('a token id: tok_ followed by a ULID (not the secret)');

/** An instant as the stores keep it: ISO 8601 in UTC. */
export const Instant = z.iso.datetime().describe('an instant, ISO 8601 in UTC');
/** A count of things: a non-negative integer. */
export const Count = z.int().nonnegative();
/** Counts by name. */
export const Counts = z.record(z.string(), Count);
