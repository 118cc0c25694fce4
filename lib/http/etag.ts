/**
 * Conditional GETs of the board's overview (issue 14.2: `GET /v1/board/overview`, `GET /board/fragment`):
 * whether a request's `If-None-Match` names the answer's tag, so it is answered 304 with no body before
 * the answer is rendered (RFC 9110 §13.1.2: weak comparison, a list of tags, or `*`).
 */

/** Whether `header` (an `If-None-Match` value) names `etag` (a quoted tag) or is `*`; weak and strong alike. */
export function namesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}
