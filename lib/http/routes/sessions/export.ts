/**
 * `GET /v1/sessions/{sid}/export`: the session's audit bundle (issue 15.3, docs/audit.md), a tar streamed
 * while it holds a replay slot of its token (429 `too_many_replays`); the digest written for it takes a
 * place in the scan gate. The work is lib/service/digests/export.ts.
 */
import { z } from 'zod';
import { checkExport, exportSession } from '../../../service/digests/export.js';
import { SessionPath } from '../../params.js';
import { clientSignal, slotBody, takeReplaySlot } from '../../replay-slots.js';
import { defineRoute, raw, SESSION } from '../../route.js';

// Digits only, as for offsets: `z.coerce` would read '0x1' and ' 1' as numbers.
const HeadSeq = z
  .string()
  .regex(/^[1-9]\d{0,15}$/, 'head is the seq of a stored digest, a whole number from 1')
  .transform(Number)
  .pipe(z.number().int().max(Number.MAX_SAFE_INTEGER))
  .optional()
  .describe(
    'bundle exactly up to this stored digest (`POST /v1/sessions/{sid}/digests` answers its seq), writing none',
  );

const headerDoc = (description: string) => ({ description, schema: { type: 'string' as const } });

export const exportRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/sessions/{sid}/export',
    operationId: 'exportSession',
    tags: ['sessions'],
    summary: 'The audit bundle of a session: segments, signed digests, keys',
    description: [
      'Writes a signed digest of the session (reason `export`) unless its head digest already covers every',
      'chunk and is under 60 s old (then the bundle ends with that head), then streams a tar holding, under',
      '`{sid}/`, every stored digest up to that one (`digests/{seq:09}.json`), the public keys',
      '(`keys/{key_id}.json`), each segment as stored up to the length that digest attests',
      '(`segments/{w}.jsonl`; chunks ingested meanwhile are left for the next export) and',
      '`manifest.json` last. `hansard verify --digests FILE --public-key KEY` checks it offline; see',
      'docs/audit.md. Counts as a replay for the token (`too_many_replays`).',
      'With `head=N` nothing is written: the bundle ends with stored digest N (`digest_not_found` when',
      'there is none). On AWS the replay function URL serves this route too, streaming a bundle of up',
      "to 200 MB (Lambda's streamed-response limit); it cannot sign, so without `head` it bundles the",
      'newest stored digest (`no_digest` when the session has none: POST …/digests on the API URL first).',
    ].join(' '),
    request: { params: SessionPath, query: z.object({ head: HeadSeq }) },
    responses: {
      200: {
        description: 'the bundle, streamed',
        headers: {
          'content-disposition': headerDoc('attachment; filename="{sid}.tar"'),
          'hansard-head-seq': headerDoc("the seq of the bundle's newest digest (its manifest's head)"),
          'hansard-head-sha256': headerDoc("that digest's SHA-256 (digestHash), lowercase hex"),
        },
        content: { 'application/x-tar': { schema: raw('a ustar archive; see docs/audit.md') } },
      },
    },
  },
  auth: 'bearer',
  scopes: ['read'],
  errors: [
    'bad_request',
    ...SESSION,
    'digest_not_found',
    'no_digest',
    'data_loss',
    'storage_layout',
    'too_many_replays',
    'digests_unavailable',
    'signing_unavailable',
  ],
  // The AWS replay function serves it too: API Gateway buffers a response, which caps a bundle at 6 MB.
  streamed: true,
  handler: async (c) => {
    const { sid } = c.req.valid('param');
    const { head } = c.req.valid('query');
    const ctx = c.get('ctx');
    const { reads } = c.get('services');
    const headers = {
      'content-type': 'application/x-tar',
      'content-disposition': `attachment; filename="${sid}.tar"`,
    };
    await checkExport(ctx, sid);
    // A HEAD writes no digest and reads nothing (not even whether digest `head` exists).
    if (c.req.method === 'HEAD') return c.body(null, 200, headers);
    // The slot is taken before the digest is written, and the body holds the same one to its end.
    const release = takeReplaySlot(c, reads.slots);
    const signal = clientSignal(c);
    try {
      const bundle = await reads.gate.run(
        () => exportSession({ ctx, sid, signal, ...(head !== undefined ? { head } : {}) }),
        signal,
      );
      return slotBody(
        c,
        reads,
        bundle.body,
        {
          ...headers,
          'hansard-head-seq': String(bundle.head.seq),
          'hansard-head-sha256': bundle.head.sha256,
        },
        release,
      );
    } catch (err) {
      release();
      throw err;
    }
  },
});
