/**
 * What a delivery sends (issue 28 item 3): the body in the target's format and its Standard Webhooks
 * headers.
 *
 * - `standard`: `{type, timestamp, data}` as the Standard Webhooks specification recommends, `data` holding
 *   the event's id, tenant, session, board link and its own fields.
 * - `slack`: an incoming-webhook body: `text` (the fallback a notification shows) and `blocks` (a section
 *   of mrkdwn and a context line), every value with `&`, `<` and `>` escaped as Slack asks, so a note can
 *   neither mention `<!channel>` nor forge a link.
 *
 * Both are signed the same way: `webhook-signature` is `v1,<base64 HMAC-SHA256>` of
 * `{webhook-id}.{webhook-timestamp}.{body}` under each of the target's live secrets, space-separated, made
 * by the `standardwebhooks` package itself (the receiver's, unchanged, verifies it).
 */
import { Webhook } from 'standardwebhooks';
import type { AlertDelivery } from '../../store/index.js';

/** An event as a delivery sends it. */
export interface WireEvent {
  id: string;
  type: string;
  tenant: string;
  session: string | null;
  at: string;
  /** the board row: `{origin}/sessions/{sid}` (or the board's front page for tenant-wide events) */
  link: string;
  data: Record<string, unknown>;
}

/** The event of a delivery, with its link on the board at `boardOrigin` (null: a path). */
export function wireEvent(d: AlertDelivery, boardOrigin: string | null): WireEvent {
  // Tenant-wide events (quota, budget, a test) link the board's overview, where its usage band is.
  const path = d.sid ? `/sessions/${d.sid}` : '/';
  return {
    id: d.event_id,
    type: d.kind,
    tenant: d.tenant,
    session: d.sid,
    at: d.event.at,
    link: `${boardOrigin ?? ''}${path}`,
    data: d.event.data,
  };
}

/** The `standard` body. */
export function standardBody(e: WireEvent): string {
  const { type, at, ...rest } = e;
  return JSON.stringify({
    type,
    timestamp: at,
    data: { ...rest.data, id: e.id, tenant: e.tenant, session: e.session, link: e.link },
  });
}

/** `&`, `<`, `>` as Slack's mrkdwn wants them (https://api.slack.com/reference/surfaces/formatting#escaping). */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** One line saying what happened, plain text (escaped by the caller for Slack). */
export function headline(e: WireEvent): string {
  const d = e.data;
  const who = e.session ? `session ${e.session}` : `tenant ${e.tenant}`;
  switch (e.type) {
    case 'session.blocked':
      return `Blocked: ${who}${d.note ? ` — ${String(d.note)}` : ''}`;
    case 'session.needs_review':
      return `Needs review: ${who}${d.note ? ` — ${String(d.note)}` : ''}`;
    case 'session.done':
      return `Done: ${who}${d.note ? ` — ${String(d.note)}` : ''}`;
    case 'claim.unsupported':
      return `A claim the record does not support: ${who} (${String(d.unsupported ?? '?')} of ${String(d.claims ?? '?')} checked claims)`;
    case 'work.unknown':
      return `Lease expired, state unknown: ${String(d.actor ?? 'someone')} on ${who}${d.summary ? ` — ${String(d.summary)}` : ''}`;
    case 'record.damaged':
      return `Record damaged (${String(d.what ?? '?')}): ${who} — ${String(d.detail ?? '')}`;
    case 'quota.near':
      return `Storage at ${String(d.level)} % of the quota: ${String(d.used_bytes)} of ${String(d.quota_bytes)} bytes (tenant ${e.tenant})`;
    case 'budget.crossed':
      return `Budget: ${String(d.level)} % of $${String(d.monthly_budget_usd)} reached in ${String(d.month)} ($${Number(d.month_cost_usd ?? 0).toFixed(2)}, tenant ${e.tenant})`;
    default:
      return `hansard test alert for tenant ${e.tenant}`;
  }
}

/** The `slack` body: `text` plus blocks, escaped. */
export function slackBody(e: WireEvent): string {
  const text = slackEscape(headline(e));
  const link = e.link.startsWith('http') ? ` <${slackEscape(e.link)}|open on the board>` : '';
  return JSON.stringify({
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${slackEscape(e.type)}* ${text}${link}` } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: slackEscape(`${e.at} · ${e.id}`) }] },
    ],
  });
}

/**
 * The three Standard Webhooks headers of `body`, signed with every secret of `secrets` (`whsec_…`, the
 * current one first): `webhook-signature` holds one `v1,…` per secret, space-separated (a rotation's grace).
 */
export function signedHeaders(
  msgId: string,
  at: Date,
  body: string,
  secrets: string[],
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(msgId, at, body)).join(' '),
  };
}
