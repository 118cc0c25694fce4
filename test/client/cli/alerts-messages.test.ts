/**
 * What `hansard alerts test --wait` says when its event is not delivered (lib/client/cli/cmd-alerts.ts
 * `notDelivered`): a test waiting behind a tenant-wide event being retried is told so, not blamed on a
 * stopped worker (found by a newcomer's walkthrough), and an HTTP failure is said once.
 */
import { describe, expect, it } from 'vitest';
import { notDelivered } from '../../../lib/client/cli/cmd-alerts.js';
import type { AlertDeliveryView } from '../../../lib/contract/alerts.js';

const TARGET = 'at_01KZVVGRNTBMSD610TK2GA9BFS';
const delivery = (over: Partial<AlertDeliveryView>): AlertDeliveryView => ({
  target_id: TARGET,
  event_id: 'msg_TEST0000000000000000000000',
  kind: 'alert.test',
  sid: null,
  status: 'pending',
  attempts: 0,
  next_at: '2026-12-07T10:00:00.000Z',
  last_status: null,
  last_error: null,
  created_at: '2026-12-07T09:59:00.000Z',
  delivered_at: null,
  ...over,
});

describe('notDelivered', () => {
  const test = delivery({});
  const failing = delivery({
    event_id: 'msg_QUOTA000000000000000000000',
    kind: 'quota.near',
    attempts: 2,
    last_status: 500,
    last_error: 'HTTP 500: down',
    next_at: '2026-12-07T10:01:00.000Z',
  });

  it('names the retried tenant-wide event the test waits behind', () => {
    const m = notDelivered(TARGET, test.event_id, test, [test, failing]);
    expect(m).toBe(
      'msg_TEST0000000000000000000000 waits behind msg_QUOTA000000000000000000000 (quota.near), which failed (HTTP 500: down) and is retried at 2026-12-07T10:01:00.000Z: tenant-wide events go to a target in order. hansard alerts deliveries at_01KZVVGRNTBMSD610TK2GA9BFS shows both',
    );
  });

  it('asks about the worker only when nothing is ahead of it', () => {
    expect(notDelivered(TARGET, test.event_id, test, [test])).toMatch(
      /is the server's alert worker running\?/,
    );
    expect(notDelivered(TARGET, test.event_id, undefined, [])).toMatch(
      /is the server's alert worker running\?/,
    );
  });

  it('says an HTTP failure once, and a refusal as the server put it', () => {
    const failed = delivery({ attempts: 1, last_status: 500, last_error: 'HTTP 500: down' });
    expect(notDelivered(TARGET, test.event_id, failed, [failed])).toMatch(/\(HTTP 500: down\); retried at /);
    const refused = delivery({
      attempts: 1,
      last_error: 'refused: the target’s address 127.0.0.1 is a loopback …',
    });
    expect(notDelivered(TARGET, test.event_id, refused, [refused])).toMatch(
      /\(refused: the target’s address 127\.0\.0\.1 is/,
    );
    const dead = delivery({ status: 'dead', attempts: 9, last_status: 404, last_error: null });
    expect(notDelivered(TARGET, test.event_id, dead, [dead])).toMatch(
      /given up after 9 attempts \(HTTP 404\)/,
    );
  });
});
