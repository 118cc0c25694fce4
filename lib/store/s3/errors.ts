/**
 * What an S3 error answer means to the stores (segments, digests, replay archives): a conditional write
 * that lost (412) or must be tried again (409), a key that is not there (404, or 403 for a role without
 * s3:ListBucket); and the pause before trying again.
 */
import { S3ServiceException } from '@aws-sdk/client-s3';

function status(err: unknown): number | undefined {
  return err instanceof S3ServiceException ? err.$metadata.httpStatusCode : undefined;
}

/** 412: `If-None-Match: *` found an object, or `If-Match` a different ETag. */
export function isPreconditionFailed(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.name === 'PreconditionFailed' || status(err) === 412);
}

/** 409: a concurrent conditional write of the same key; S3 says to try again. */
export function isConditionalConflict(err: unknown): boolean {
  return (
    err instanceof S3ServiceException && (err.name === 'ConditionalRequestConflict' || status(err) === 409)
  );
}

/** 403 AccessDenied: refused, or (for a role without s3:ListBucket) a key that does not exist. */
export function isForbidden(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.name === 'AccessDenied' || status(err) === 403);
}

/** 404 NoSuchKey: no object under the key. */
export function isNotFound(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.name === 'NoSuchKey' || status(err) === 404);
}

/** Resolves after `ms` milliseconds (a back-off between tries of a conditional write). */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
