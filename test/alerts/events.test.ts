/**
 * The alert events of a change (lib/service/alerts/events.ts, issue 28 item 1): ids derived from the
 * change, a repeated state firing nothing, the claims and lease watches.
 */

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CLAIM_CHECK_AFTER_MS,
  eventId,
  leaseExpiryId,
  leaseWatch,
  statusEvents,
} from '../../lib/service/alerts/events.js';
import type { StatusRecord, WorkItem } from '../../lib/store/index.js';

const SID = 's_01KZVVGRNTBMSD610TK2GA9BFS';

function record(states: string[], opts: { version?: number; events?: unknown[] } = {}): StatusRecord {
  return {
    tenant: 'acme',
    sid: SID,
    reports: states.map((state, i) => ({
      state,
      note: `note ${i}`,
      events: i === states.length - 1 ? (opts.events ?? []) : [],
      events_dropped: 0,
      reported_at: `2026-12-07T10:0${i}:00.000Z`,
      reported_by: 'tok_01KZVVGRNTBMSD610TK2GA9BFS',
    })),
    dropped_events: 0,
    dropped_reports: 0,
    version: opts.version ?? states.length,
    state_since: `2026-12-07T10:0${states.length - 1}:00.000Z`,
  };
}

describe('eventId', () => {
  it('is msg_ and 26 Crockford base32 characters, the same for the same parts, another for others', () => {
    const a = eventId('acme', SID, 'status', '3');
    expect(a).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(eventId('acme', SID, 'status', '3')).toBe(a);
    expect(eventId('acme', SID, 'status', '4')).not.toBe(a);
    // parts are joined with NUL: moving a boundary changes the id
    expect(eventId('ac', 'me')).not.toBe(eventId('a', 'cme'));
    expect(eventId('other', SID, 'status', '3')).not.toBe(a);
  });

  it('is the first 130 bits of the SHA-256 of the NUL-joined parts, in Crockford base32 (known answer)', () => {
    const parts = ['acme', SID, 'status', '3'];
    const digest = createHash('sha256').update(parts.join('\0')).digest();
    const bits = BigInt(`0x${digest.toString('hex')}`) >> BigInt(256 - 130);
    let expected = '';
    for (let k = 25; k >= 0; k--)
      expected += '0123456789ABCDEFGHJKMNPQRSTVWXYZ'[Number((bits >> BigInt(5 * k)) & 31n)];
    expect(eventId(...parts)).toBe(`msg_${expected}`);
  });
});

describe('statusEvents', () => {
  it('fires session.blocked when a session becomes blocked, with the note and since, no transcript', () => {
    const prev = record(['working']);
    const next = record(['working', 'blocked']);
    const events = statusEvents(prev, next);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      tenant: 'acme',
      kind: 'session.blocked',
      sid: SID,
      at: '2026-12-07T10:01:00.000Z',
      due_at: '2026-12-07T10:01:00.000Z',
      watch: null,
      only_target: null,
      data: { state: 'blocked', since: '2026-12-07T10:01:00.000Z', note: 'note 1' },
    });
    expect(events[0]!.id).toBe(eventId('acme', SID, 'status', '2'));
  });

  it("takes the report's time as since when the record has no state_since (written before it was kept)", () => {
    const next = record(['working', 'blocked']);
    delete next.state_since;
    expect(statusEvents(record(['working']), next)[0]!.data.since).toBe('2026-12-07T10:01:00.000Z');
  });

  it('fires needs_review and done; working fires nothing', () => {
    expect(statusEvents(null, record(['needs_review']))[0]!.kind).toBe('session.needs_review');
    expect(statusEvents(record(['blocked']), record(['blocked', 'done']))[0]!.kind).toBe('session.done');
    expect(statusEvents(record(['blocked']), record(['blocked', 'working']))).toEqual([]);
  });

  it('fires nothing for a report that repeats the state', () => {
    expect(statusEvents(record(['blocked']), record(['blocked', 'blocked']))).toEqual([]);
  });

  it('adds a claims watch, due CLAIM_CHECK_AFTER_MS later, for a report with a command or test claim only', () => {
    const withCommand = record(['working', 'done'], {
      events: [{ kind: 'tests_passed', evidence: [{ type: 'command', ref: 'npm test' }] }],
    });
    const events = statusEvents(record(['working']), withCommand);
    expect(events.map((e) => e.kind)).toEqual(['session.done', 'claim.unsupported']);
    const watch = events[1]!;
    expect(watch.id).toBe(eventId('acme', SID, 'claims', '2'));
    expect(watch.watch).toEqual({ status_version: 2 });
    // one checked claim among others is enough
    const mixed = record(['working', 'working'], {
      events: [
        {
          kind: 'evidence',
          evidence: [
            { type: 'file', ref: 'a.ts' },
            { type: 'test', ref: 'npm test' },
          ],
        },
      ],
    });
    expect(statusEvents(record(['working']), mixed).map((e) => e.kind)).toEqual(['claim.unsupported']);
    expect(Date.parse(watch.due_at) - Date.parse(watch.at)).toBe(CLAIM_CHECK_AFTER_MS);
    const fileOnly = record(['working', 'working'], {
      events: [{ kind: 'file_changed', evidence: [{ type: 'file', ref: 'a.ts' }] }],
    });
    expect(statusEvents(record(['working']), fileOnly)).toEqual([]);
  });
});

describe('leaseWatch', () => {
  const item = (over: Partial<WorkItem>): WorkItem =>
    ({
      tenant: 'acme',
      id: 'wk_1',
      session: SID,
      state: 'active',
      lease_expires_at: '2026-12-07T10:15:00.000Z',
      updated_at: '2026-12-07T10:00:00.000Z',
      version: 1,
      ...over,
    }) as WorkItem;
  const now = new Date('2026-12-07T10:05:00.000Z');

  it('watches a started lease, due at its expiry', () => {
    const w = leaseWatch(null, item({}), now)!;
    expect(w).toMatchObject({
      kind: 'work.unknown',
      due_at: '2026-12-07T10:15:00.000Z',
      watch: { work_id: 'wk_1' },
    });
    expect(w.id).toBe(eventId('acme', 'wk_1', 'lease-watch', '1'));
    expect(w.agents).toEqual([]);
    // one expiry's event has an id of its own, the same from any watch
    expect(leaseExpiryId('acme', 'wk_1', '2026-12-07T10:15:00.000Z')).toBe(
      eventId('acme', 'wk_1', 'unknown', '2026-12-07T10:15:00.000Z'),
    );
  });

  it('adds no watch for a renewal of a live lease (the watch follows it) or a stop', () => {
    expect(
      leaseWatch(item({}), item({ version: 2, lease_expires_at: '2026-12-07T10:20:00.000Z' }), now),
    ).toBeNull();
    expect(leaseWatch(item({}), item({ version: 2, state: 'stopped' }), now)).toBeNull();
    expect(leaseWatch(null, item({ state: 'stopped' }), now)).toBeNull();
    // a lease that expires exactly now is no longer live: the renewal is watched again
    const atNow = item({ lease_expires_at: now.toISOString() });
    expect(
      leaseWatch(atNow, item({ version: 2, lease_expires_at: '2026-12-07T10:20:00.000Z' }), now),
    ).not.toBeNull();
  });

  it('watches again a lease renewed after it had expired', () => {
    const expired = item({ lease_expires_at: '2026-12-07T10:01:00.000Z' });
    const w = leaseWatch(expired, item({ version: 2, lease_expires_at: '2026-12-07T10:20:00.000Z' }), now);
    expect(w?.due_at).toBe('2026-12-07T10:20:00.000Z');
    expect(w?.id).not.toBe(leaseWatch(null, item({}), now)!.id);
  });
});
