/**
 * `GET /v1/sessions/{sid}/export`: the session's audit bundle (issue 15.3, docs/audit.md), a tar streamed
 * while it holds a replay slot of its token (429 `too_many_replays`); the digest written for it takes a
 * place in the scan gate. The work is lib/service/export.ts.
 */
import { checkExport, exportSession } from '../../../service/export.js';
import { SessionPath } from '../../params.js';
import { clientSignal, slotBody, takeReplaySlot } from '../../replay-slots.js';
import { defineRoute, raw, SESSION } from '../../route.js';

const headerDoc = (description: string) => ({ description, schema: { type: 'string' as const } });

export const exportRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/sessions/{sid}/export',
    operationId: 'exportSession',
    tags: ['sessions'],
    summary: 'The audit bundle of a session: segments, signed digests, keys',
    description: [
      'Writes a signed digest of the session (reason `export`), then streams a tar holding, under',
      '`{sid}/`, every stored digest up to that one (`digests/{seq:09}.json`), the public keys',
      '(`keys/{key_id}.json`), each segment as stored up to the length that digest attests',
      '(`segments/{w}.jsonl`; chunks ingested meanwhile are left for the next export) and',
      '`manifest.json` last. `hansard verify --digests FILE --public-key KEY` checks it offline; see',
      'docs/audit.md. Counts as a replay for the token (`too_many_replays`).',
    ].join(' '),
    request: { params: SessionPath },
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
    ...SESSION,
    'data_loss',
    'storage_layout',
    'too_many_replays',
    'digests_unavailable',
    'signing_unavailable',
  ],
  handler: async (c) => {
    const { sid } = c.req.valid('param');
    const ctx = c.get('ctx');
    const { reads } = c.get('services');
    const headers = {
      'content-type': 'application/x-tar',
      'content-disposition': `attachment; filename="${sid}.tar"`,
    };
    await checkExport(ctx, sid);
    // A HEAD writes no digest and reads nothing.
    if (c.req.method === 'HEAD') return c.body(null, 200, headers);
    // The slot is taken before the digest is written, and the body holds the same one to its end.
    const release = takeReplaySlot(c, reads.slots);
    const signal = clientSignal(c);
    try {
      const bundle = await reads.gate.run(() => exportSession({ ctx, sid, signal }), signal);
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
