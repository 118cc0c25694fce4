/**
 * `POST /v1/sessions/{sid}/digests`: signs a digest of the session now (reason `export`) when it adds
 * something, else answers the current head (200, `fresh: false`), and answers its seq, so that `GET …/export?head={seq}` can be asked of a function that cannot sign: on AWS the
 * replay function's URL, which streams bundles of up to 200 MB (docs/audit.md). The work is
 * lib/service/digests/export-head.ts.
 */
import { z } from 'zod';
import { createExportDigest, type ExportDigest } from '../../../service/digests/export-head.js';
import { SessionPath } from '../../params.js';
import { clientSignal } from '../../replay-slots.js';
import { defineRoute, json, SESSION } from '../../route.js';

const ExportDigestAnswer = z
  .object({
    seq: z.number().int().min(1).describe("the digest's seq: pass it as …/export?head="),
    sha256: z.string().describe("the digest's SHA-256 (digestHash), lowercase hex"),
    at: z.string().describe('when it was signed (ISO 8601)'),
    fresh: z
      .boolean()
      .describe('true: signed by this call (201); false: the existing head, which covers every chunk (200)'),
  })
  .meta({ id: 'ExportDigest' }) satisfies z.ZodType<ExportDigest>;

export const createDigestRoute = defineRoute({
  route: {
    method: 'post',
    path: '/v1/sessions/{sid}/digests',
    operationId: 'createDigest',
    tags: ['sessions'],
    summary: 'Sign a digest of the session now, for an export',
    description: [
      'Writes a signed digest of the session (reason `export`) covering every chunk indexed so far and',
      'answers its seq (201, `fresh: true`); when another process wrote the next digest at the same moment,',
      'that one is answered. A digest is written only when it adds something: when the session has none,',
      'changed since its head (a writer grew, ended or was added), or its head is older than a minimum age',
      '(60 s by default); otherwise the head, which already covers every chunk, is answered (200,',
      '`fresh: false`), so repeated calls store nothing. Then `GET /v1/sessions/{sid}/export?head={seq}` bundles exactly up to it, on this URL',
      'or, on AWS, on the replay function URL, which streams bundles of up to 200 MB (docs/audit.md).',
    ].join(' '),
    request: { params: SessionPath },
    responses: {
      201: json('a digest signed now, at the head of the session', ExportDigestAnswer),
      200: json('the existing head: the session has not changed since and it is young', ExportDigestAnswer),
    },
  },
  auth: 'bearer',
  scopes: ['read'],
  errors: [...SESSION, 'storage_layout', 'digests_unavailable', 'signing_unavailable'],
  handler: async (c) => {
    const { sid } = c.req.valid('param');
    const ctx = c.get('ctx');
    const { reads } = c.get('services');
    // Reading the chunk records since the last digest is a scan: it waits for a place as an export's does.
    const answer = await reads.gate.run(() => createExportDigest(ctx, sid), clientSignal(c));
    return answer.fresh ? c.json(answer, 201) : c.json(answer, 200);
  },
});
