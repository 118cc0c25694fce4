/**
 * `POST /v1/alerts`: a new alert target and its rule (scope `admin`, issue 28 item 2); its signing secret
 * is in this answer only.
 */
import { addTarget } from '../../../service/alerts/index.js';
import { jsonBody } from '../../params.js';
import { AUTHED, defineRoute, JSON_BODY, json, WRITE_FAULTS } from '../../route.js';
import { AlertTargetBody, AlertTargetCreatedAnswer } from './schemas.js';

export const addAlertTargetRoute = defineRoute({
  route: {
    method: 'post',
    path: '/v1/alerts',
    operationId: 'addAlertTarget',
    tags: ['alerts'],
    summary: 'Add an alert target',
    description: [
      'A URL that takes a POST for each event its rule matches: `events` (empty: every kind), `agents`',
      '(empty: any), `after_seconds` (a session state is sent once it has held this long), `format`',
      '(`standard`: Standard Webhooks JSON, `slack`: an incoming-webhook body). The answer carries the',
      '`whsec_` secret that signs every delivery, shown this once. A URL that resolves to a loopback,',
      'link-local or private address is refused (400 `invalid_target`) unless the operator allowed such',
      'targets (`hansard serve --allow-private-alert-targets`); at most 50 targets a tenant (409',
      '`too_many_targets`). docs/alerts.md says what each event means and how to verify a signature.',
    ].join(' '),
    responses: { 201: json('created; the secret is shown this once', AlertTargetCreatedAnswer) },
  },
  auth: 'bearer',
  scopes: ['admin'],
  body: { contentType: 'application/json', schema: AlertTargetBody },
  errors: [
    ...JSON_BODY,
    'invalid_target',
    ...AUTHED,
    'too_many_targets',
    'alerts_unavailable',
    ...WRITE_FAULTS,
  ],
  handler: async (c) => c.json(await addTarget(c.get('ctx'), await jsonBody(c)), 201),
});
