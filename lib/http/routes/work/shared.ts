/** What the work routes share: the `{id}` path, the `Idempotency-Key` header, the error lists. */
import type { Context } from 'hono';
import { z } from 'zod';
import { IDEMPOTENCY_KEY_RULE, WorkId } from '../../../contract/work.js';
import { AppError, type ErrorCode } from '../../../service/shared/errors.js';
import type { AppEnv } from '../../auth.js';
import { AUTHED, JSON_BODY, WRITE_FAULTS } from '../../route.js';

/** `{id}` of a work route's path. */
export const WorkPath = z.object({ id: WorkId });

/** The `Idempotency-Key` header as documented on each semantic operation. */
export const IDEMPOTENCY_HEADER = z.object({
  'idempotency-key': z
    .string()
    .optional()
    .describe(
      '8 to 128 printable ASCII characters without spaces: the same key with the same body is answered as before and stored once',
    ),
});

/**
 * The request's `Idempotency-Key`, or null. @throws AppError `bad_request` when it is not 8 to 128
 * printable ASCII characters
 */
export function idempotencyKey(c: Context<AppEnv>): string | null {
  const key = c.req.header('idempotency-key');
  if (key === undefined) return null;
  if (!IDEMPOTENCY_KEY_RULE.test(key)) {
    throw new AppError(
      'bad_request',
      'Idempotency-Key is 8 to 128 printable ASCII characters without spaces',
    );
  }
  return key;
}

/** What a work write may answer. */
export const WORK_WRITE: readonly ErrorCode[] = [
  'bad_request',
  ...JSON_BODY,
  ...AUTHED,
  'invalid_id',
  'not_found',
  'not_owner',
  'work_mismatch',
  'content_rule',
  'conflict',
  ...WRITE_FAULTS,
];
