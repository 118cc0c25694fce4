/**
 * Alerts (issue 28): the event kinds, the target rules and the shapes both sides of `/v1/alerts` use.
 * What each event means is docs/alerts.md; how an event is made is lib/service/alerts/events.ts.
 */
import { z } from 'zod';
import { Count, Instant } from './ids.js';

/** Every event kind an alert target can ask for, in the order the docs list them. */
export const ALERT_KINDS = [
  'session.blocked',
  'session.needs_review',
  'session.done',
  'claim.unsupported',
  'work.unknown',
  'record.damaged',
  'quota.near',
  'budget.crossed',
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
/**
 * The kinds a rule's `after_seconds` holds back: states that can end before they are sent (the others
 * are facts, sent at once).
 */
export const HELD_KINDS: readonly AlertKind[] = [
  'session.blocked',
  'session.needs_review',
  'session.done',
  'work.unknown',
];
/** The kind of the event `alerts test` sends (never matched by a rule: only the target asked gets it). */
export const TEST_KIND = 'alert.test';

/** Payload formats: Standard Webhooks JSON, or a Slack incoming-webhook body. */
export const ALERT_FORMATS = ['standard', 'slack'] as const;
export type AlertFormat = (typeof ALERT_FORMATS)[number];

/** `at_` + a ULID: an alert target's id. */
export const AlertTargetId = z
  .string()
  .regex(/^at_[0-9A-HJKMNP-TV-Z]{26}$/, 'an alert target id is at_ followed by a ULID')
  .describe('an alert target id: at_ followed by a ULID');

/** `msg_` + 26 characters of Crockford base32: an event's id, the `webhook-id` of every delivery of it. */
export const AlertEventId = z
  .string()
  .regex(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/, 'an alert event id is msg_ followed by 26 base32 characters');

/** Longest wait `--after` takes: a day, the retry window. */
export const MAX_AFTER_SECONDS = 86_400;
/** The longest grace a rotation gives the previous secret: a week, in seconds. */
export const MAX_GRACE_SECONDS = 604_800;
/** Most targets a tenant may have (each delivery reads them all). */
export const MAX_TARGETS = 50;
/** Longest target URL, in characters. */
export const MAX_URL_CHARS = 2048;

/** `POST /v1/alerts`: a new target and its rule. */
export const AlertTargetInput = z
  .object({
    url: z.string().max(MAX_URL_CHARS).describe('an https:// (or http://) URL that takes a POST'),
    events: z
      .array(z.enum(ALERT_KINDS))
      .max(ALERT_KINDS.length)
      .default([])
      .describe('the event kinds it gets; empty or absent: all'),
    agents: z
      .array(z.string().min(1).max(200))
      .max(50)
      .default([])
      .describe("only sessions of these agents (the writers' meta.agent); empty: any"),
    after_seconds: z
      .int()
      .min(0)
      .max(MAX_AFTER_SECONDS)
      .default(0)
      .describe('send a session state only once it has held this long (0: at once)'),
    format: z.enum(ALERT_FORMATS).default('standard'),
    label: z.string().max(120).optional(),
  })
  .strict();
export type AlertTargetInput = z.infer<typeof AlertTargetInput>;

/** A delivery's state: waiting (or retrying), delivered, given up (dead letter), or not sent. */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead', 'skipped'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One delivery as the API and the board show it. */
export const AlertDeliveryView = z.object({
  target_id: AlertTargetId,
  event_id: AlertEventId,
  kind: z.string(),
  sid: z.string().nullable(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: Count,
  /** when it is tried next (pending), null otherwise */
  next_at: Instant.nullable(),
  /** the last attempt's HTTP status, null before any or when no answer came */
  last_status: z.int().nullable(),
  /** the last attempt's failure, short (a timeout, a refused address, a 500's first words) */
  last_error: z.string().nullable(),
  created_at: Instant,
  delivered_at: Instant.nullable(),
  /** why it was skipped (the state changed before `after_seconds`) */
  skipped_reason: z.string().nullable().optional(),
});
export type AlertDeliveryView = z.infer<typeof AlertDeliveryView>;

/** A target as listed (never its secret). */
export const AlertTargetView = z.object({
  id: AlertTargetId,
  url: z.string(),
  format: z.enum(ALERT_FORMATS),
  events: z.array(z.enum(ALERT_KINDS)),
  agents: z.array(z.string()),
  after_seconds: Count,
  label: z.string().nullable(),
  created_at: Instant,
  created_by: z.string(),
  /** until when the previous secret still signs too (after a rotation), null when there is none */
  previous_secret_until: Instant.nullable(),
});
export type AlertTargetView = z.infer<typeof AlertTargetView>;

/** The answer to creating a target or rotating its secret: the only time the secret is shown. */
export const AlertTargetCreated = AlertTargetView.extend({
  secret: z.string().describe('whsec_…: shown once; a receiver verifies signatures with it'),
});
export type AlertTargetCreated = z.infer<typeof AlertTargetCreated>;
