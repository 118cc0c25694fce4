/**
 * What a delivery sends (lib/service/alerts/payload.ts): the Standard Webhooks headers verified by the
 * `standardwebhooks` package unchanged (both secrets during a rotation), the bodies, Slack's escaping.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { ALERT_KINDS, TEST_KIND } from '../../lib/contract/alerts.js';
import {
  headline,
  signedHeaders,
  slackBody,
  slackEscape,
  standardBody,
  type WireEvent,
} from '../../lib/service/alerts/payload.js';
import { newSecret } from '../../lib/service/alerts/secrets.js';

const event: WireEvent = {
  id: 'msg_01KZVVGRNTBMSD610TK2GA9BFS',
  type: 'session.blocked',
  tenant: 'acme',
  session: 's_01KZVVGRNTBMSD610TK2GA9BFS',
  at: '2026-12-07T10:00:00.000Z',
  link: 'https://board.example.com/sessions/s_01KZVVGRNTBMSD610TK2GA9BFS',
  data: { state: 'blocked', note: 'waiting on <@U123> & the <!channel> > review' },
};

describe('signedHeaders', () => {
  it('verifies with the standardwebhooks package under the secret', () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = standardBody(event);
    const headers = signedHeaders(event.id, new Date(), body, [secret]);
    expect(headers['webhook-id']).toBe(event.id);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    // another secret, or a changed body, fails
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
  });

  it('carries one signature per secret during a rotation: a receiver with either verifies', () => {
    const [current, previous] = [newSecret(), newSecret()];
    const body = standardBody(event);
    const headers = signedHeaders(event.id, new Date(), body, [current, previous]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(current).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(previous).verify(body, headers)).not.toThrow();
  });
});

describe('bodies', () => {
  it('standard: {type, timestamp, data} with the id, tenant, session and link in data', () => {
    expect(JSON.parse(standardBody(event))).toEqual({
      type: 'session.blocked',
      timestamp: '2026-12-07T10:00:00.000Z',
      data: {
        state: 'blocked',
        note: event.data.note,
        id: event.id,
        tenant: 'acme',
        session: event.session,
        link: event.link,
      },
    });
  });

  it('slack: text plus blocks, &<> escaped so a note cannot mention or link', () => {
    expect(slackEscape('a & <b> c')).toBe('a &amp; &lt;b&gt; c');
    const body = JSON.parse(slackBody(event));
    expect(body.text).toBe(slackEscape(headline(event)));
    expect(body.text).not.toMatch(/<!channel>|<@U123>/);
    expect(body.text).toContain('&lt;!channel&gt;');
    expect(body.blocks[0].type).toBe('section');
    expect(body.blocks[0].text.text).toContain(`<${event.link}|open on the board>`);
    expect(body.blocks[1].type).toBe('context');
  });

  it('says what happened for every kind', () => {
    // every kind has a line of its own: none falls through to the test event's
    const lines = ALERT_KINDS.map((type) => headline({ ...event, type }));
    const fallback = headline({ ...event, type: TEST_KIND });
    expect(fallback).toMatch(/test alert/);
    for (const line of lines) expect(line).not.toBe(fallback);
    expect(new Set(lines).size).toBe(ALERT_KINDS.length);
    expect(
      headline({
        ...event,
        type: 'budget.crossed',
        data: { level: 80, monthly_budget_usd: 100, month: '2026-12', month_cost_usd: 81.5 },
      }),
    ).toBe('Budget: 80 % of $100 reached in 2026-12 ($81.50, tenant acme)');
  });
});
