/**
 * What the `/v1/alerts` routes (issue 28 item 2) take and answer, named for the OpenAPI document: the
 * contract's shapes (lib/contract/alerts.ts) with their component ids, the envelopes of the listings, the
 * rotation's body, and the path and query parameters.
 */
import { z } from 'zod';
import {
  AlertDeliveryView,
  AlertEventId,
  AlertTargetCreated,
  AlertTargetId,
  AlertTargetInput,
  AlertTargetView,
  MAX_GRACE_SECONDS,
} from '../../../contract/alerts.js';
import { Limit } from '../../params.js';

/** `{id}` of a target's path: `at_` + ULID, refused before any store (400 `invalid_id`). */
export const AlertTargetPath = z.object({ id: AlertTargetId });

/** `POST /v1/alerts`'s body, as the verb validates it (`addTarget`). */
export const AlertTargetBody = AlertTargetInput.meta({
  id: 'AlertTargetInput',
  description: 'a new alert target and its rule',
});

/** `POST /v1/alerts/{id}/rotate`'s optional body. */
export const AlertRotateInput = z
  .strictObject({
    grace_seconds: z
      .int()
      .min(0)
      .max(MAX_GRACE_SECONDS)
      .optional()
      .describe(
        'how long the previous secret still signs too, 0 to 604800 s (default 86400: a day; 0: it stops at once)',
      ),
  })
  .meta({ id: 'AlertRotateInput', description: 'how long the previous secret keeps signing' });
export type AlertRotateInput = z.infer<typeof AlertRotateInput>;

/** A new target, or a rotated one, with its secret: the only answer that shows it. */
export const AlertTargetCreatedAnswer = AlertTargetCreated.meta({
  id: 'AlertTargetCreated',
  description: 'an alert target with its signing secret, shown this once',
});

/** `GET /v1/alerts`. */
export const AlertTargetList = z
  .object({ targets: z.array(AlertTargetView) })
  .meta({ id: 'AlertTargetList', description: "the tenant's alert targets, oldest first, never a secret" });

/** `POST /v1/alerts/{id}/test`. */
export const AlertTestSent = z
  .object({
    event_id: AlertEventId.describe(
      'the test event’s id: its webhook-id, and the event_id of its delivery in GET /v1/alerts/{id}/deliveries',
    ),
  })
  .meta({ id: 'AlertTestSent', description: 'a test event queued for one target' });

/** `GET /v1/alerts/{id}/deliveries`. */
export const AlertDeliveryList = z
  .object({ deliveries: z.array(AlertDeliveryView) })
  .meta({ id: 'AlertDeliveryList', description: "a target's deliveries, newest first" });

/** `GET /v1/sessions/{sid}/alerts`: a delivery without its failure text (a reader is not an admin). */
export const SessionAlertList = z
  .object({ alerts: z.array(AlertDeliveryView.omit({ last_error: true })) })
  .meta({ id: 'SessionAlertList', description: 'the alerts a session fired, newest first' });

/** `?limit=` of a delivery listing: a listing's (lib/http/params.ts), 1 to 200, default 50. */
export const DeliveryLimit = Limit.describe('how many deliveries to answer, 1 to 200 (default 50)');
