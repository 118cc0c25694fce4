/**
 * `POST /v1/alerts/{id}/rotate`: a new signing secret for a target, shown once; the previous one keeps
 * signing for `grace_seconds` (scope `admin`, issue 28 item 3).
 */
import { rotateSecret } from '../../../service/alerts/index.js';
import { parseInput } from '../../../service/shared/errors.js';
import { jsonBody } from '../../params.js';
import { AUTHED, defineRoute, JSON_BODY, json, WRITE_FAULTS } from '../../route.js';
import { AlertRotateInput, AlertTargetCreatedAnswer, AlertTargetPath } from './schemas.js';

export const rotateAlertSecretRoute = defineRoute({
  route: {
    method: 'post',
    path: '/v1/alerts/{id}/rotate',
    operationId: 'rotateAlertSecret',
    tags: ['alerts'],
    summary: "Rotate an alert target's signing secret",
    description: [
      'Answers the target with its new `whsec_` secret, shown this once. Until `previous_secret_until`',
      '(`grace_seconds` from now, default a day) every delivery carries two signatures, one per secret, so',
      'the receiver can switch to the new secret at its own pace. An empty body takes the default.',
    ].join(' '),
    request: { params: AlertTargetPath },
    responses: { 200: json('rotated; the new secret is shown this once', AlertTargetCreatedAnswer) },
  },
  auth: 'bearer',
  scopes: ['admin'],
  body: { contentType: 'application/json', schema: AlertRotateInput, optional: true },
  errors: [
    ...JSON_BODY,
    'invalid_id',
    ...AUTHED,
    'not_found',
    'conflict',
    'alerts_unavailable',
    ...WRITE_FAULTS,
  ],
  handler: async (c) => {
    const { id } = c.req.valid('param');
    const body = parseInput(AlertRotateInput, await jsonBody(c, { emptyAs: {} }), 'the rotation');
    return c.json(await rotateSecret(c.get('ctx'), id, body.grace_seconds), 200);
  },
});
