/**
 * The requests and look-alike makers of the content-rule attack suites (test/attack/content-lookalikes,
 * content-lookalikes-more, work-content-bypass): a work start with a summary, a status note, an evidence
 * ref, each sent by the suite's `reporter` token for its session; fake secrets split so no scanner of
 * this repository takes them for real ones.
 */
import { type Answer, request } from './http.js';

/** A fake GitHub token, split so no scanner of this repository takes it for a real one. */
export const GH = `ghp_${'a1B2c3D4e5F6g7H8i9J0'}${'k1L2m3N4o5P6q7R8'}`;
/** A fake AWS key id, split likewise. */
export const AWS = `${'AKIA'}${'IOSFODNN7EXAMPLE'}`;
/** `s` with `c` put after its 4th and 12th characters. */
export const inside = (s: string, c: string) => `${s.slice(0, 4)}${c}${s.slice(4, 12)}${c}${s.slice(12)}`;
/** Lower-case ASCII letters of `s` as the code points from `base` (mathematical, circled …). */
export const lettersFrom = (s: string, base: number) =>
  [...s].map((c) => (/[a-z]/.test(c) ? String.fromCodePoint(base + c.charCodeAt(0) - 97) : c)).join('');

/** What the content requests are sent with: the server and its `reporter` token (scope report). */
export interface ReporterServer {
  url: string;
  tokens: { reporter: string };
}

/** The content requests of session `sid` on `srv`, each answering the server's answer. */
export function contentRequests(srv: ReporterServer, sid: string) {
  /** `POST /v1/work` with `summary`. */
  const startWith = (summary: string): Promise<Answer> =>
    request(srv, 'POST', '/v1/work', {
      token: srv.tokens.reporter,
      json: {
        session: sid,
        system: 'claude-code',
        actor: 'coder',
        subject: { kind: 'free', ref: 'parser' },
        mode: 'implementing',
        summary,
      },
    });
  /** `POST …/status` in state working with `body`'s fields. */
  const report = (body: object): Promise<Answer> =>
    request(srv, 'POST', `/v1/sessions/${sid}/status`, {
      token: srv.tokens.reporter,
      json: { state: 'working', ...body },
    });
  /** A status note. */
  const noteOf = (note: string) => report({ note });
  /** A status with one evidence item whose ref is `ref`. */
  const refOf = (ref: string) =>
    report({
      note: 'checking',
      events: [{ kind: 'evidence', evidence: [{ type: 'command', ref, result: 'passed' }] }],
    });
  return { startWith, report, noteOf, refOf };
}
