/**
 * The replay function URL's answer to requests that went around the edge (infra/edge.ts, docs/deploy.md
 * "The replay URL behind CloudFront and WAF"). A function URL stays public even with CloudFront and WAF
 * in front of it; with the edge on, CloudFront adds a secret origin header to every request it forwards,
 * and the function refuses any request without it, so the WAF rate rule cannot be bypassed by calling
 * the function URL directly. (Origin access control would sign with SigV4 in `Authorization`, where our
 * bearer token travels, so it is not used.)
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { errorBody } from './errors.js';

/** The header CloudFront adds (an origin custom header, never sent by a viewer). */
export const ORIGIN_SECRET_HEADER = 'x-hansard-origin-secret';

/** The least length of a secret: 32 characters (the stack generates 48 letters and digits). */
export const MIN_ORIGIN_SECRET_LENGTH = 32;

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * Hono middleware: a request whose `x-hansard-origin-secret` is not `secret` gets 403 `forbidden`
 * (`{"error":{"code","message","details"}}`) before anything else runs; the rest go on. The comparison
 * takes the same time whatever the header holds (SHA-256 of both, then `timingSafeEqual`).
 * @param secret the value CloudFront sends, at least `MIN_ORIGIN_SECRET_LENGTH` characters
 * @throws RangeError for a shorter secret (a configuration error, at start-up)
 */
export function requireOriginSecret(secret: string): MiddlewareHandler {
  if (secret.length < MIN_ORIGIN_SECRET_LENGTH) {
    throw new RangeError(`the origin secret must be at least ${MIN_ORIGIN_SECRET_LENGTH} characters`);
  }
  const expected = digest(secret);
  return async (c, next) => {
    const given = c.req.header(ORIGIN_SECRET_HEADER);
    if (given !== undefined && timingSafeEqual(digest(given), expected)) return next();
    return c.json(
      errorBody(
        'forbidden',
        "this function URL answers only through the stack's replay edge (CloudFront and WAF): use the stack's ReplayEdgeUrl output as --replay-url",
        { header: ORIGIN_SECRET_HEADER },
      ),
      403,
    );
  };
}
