/**
 * `readLease` (lib/client/work/local.ts) on lease files no heartbeat of this machine writes (seed 004 "Failure
 * posture": a corrupt local lease degrades to unknown, never to invented activity): an expiry more than
 * the longest TTL (24 h) past its renewal or past now, or no renewal time, is corrupt. Real files.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renewSessionLeases } from '../../../lib/client/work/hook-heartbeat.js';
import { leasePath, readLease, renewLease, writeItem } from '../../../lib/client/work/local.js';
import { newId } from '../../../lib/log/format/ids.js';

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

function leaseFile(fields: Record<string, unknown>): { state: string; id: string } {
  const state = mkdtempSync(join(tmpdir(), 'hansard-lease-read-'));
  const id = `wk_${newId('e').slice(2)}`;
  mkdirSync(join(state, 'work'), { recursive: true });
  writeFileSync(leasePath(state, id), JSON.stringify({ version: 1, id, ttl_seconds: 600, ...fields }));
  return { state, id };
}

describe('readLease', () => {
  const now = Date.now();

  it('reads a lease a heartbeat wrote as observed, up to the longest TTL', () => {
    const state = mkdtempSync(join(tmpdir(), 'hansard-lease-read-'));
    const id = `wk_${newId('e').slice(2)}`;
    renewLease(state, id, 86_400, now, false);
    expect(readLease(state, id, now).state).toBe('observed');
    const f = leaseFile({ renewed_at: iso(now - 1000), expires_at: iso(now - 1000 + DAY) });
    expect(readLease(f.state, f.id, now).state).toBe('observed');
  });

  it('reads corrupt: an expiry over 24 h past its renewal or past now, or no renewal time', () => {
    for (const fields of [
      { renewed_at: iso(now), expires_at: '2099-01-01T00:00:00.000Z' },
      { renewed_at: iso(now), expires_at: iso(now + DAY + 1000) },
      // renewed a year ahead (a clock that ran fast), for its TTL of 10 min
      { renewed_at: iso(now + 365 * DAY), expires_at: iso(now + 365 * DAY + 600_000) },
      { expires_at: iso(now + 600_000) },
      { renewed_at: 'yesterday', expires_at: iso(now + 600_000) },
    ]) {
      const f = leaseFile(fields);
      expect(readLease(f.state, f.id, now).state, JSON.stringify(fields)).toBe('corrupt');
    }
  });

  // issue 25.5: a renewal dated after now is no evidence of activity now, however short its lease
  it('reads a lease renewed after now as ahead, never observed, and a hook renews it at once', () => {
    const sid = newId('s');
    const f = leaseFile({
      renewed_at: iso(now + 2 * 3600_000),
      expires_at: iso(now + 2 * 3600_000 + 900_000),
    });
    expect(readLease(f.state, f.id, now)).toMatchObject({
      state: 'ahead',
      renewed_at: iso(now + 2 * 3600_000),
    });
    expect(readLease(f.state, f.id, now + 2 * 3600_000).state).toBe('observed');
    // The hook of a process whose clock is right renews it (before, "renewed 2 h from now" was taken as
    // renewed within TTL/3 and skipped, so the lease stayed ahead).
    writeItem(f.state, {
      version: 1,
      id: f.id,
      session: sid,
      system: 'claude-code',
      actor: 'coder',
      ttl_seconds: 900,
      subject: { kind: 'free', ref: 'parser' },
      mode: 'implementing',
      summary: 'Parser work',
      started_at: iso(now - 60_000),
    });
    expect(renewSessionLeases(f.state, sid, now)).toEqual([f.id]);
    expect(readLease(f.state, f.id, now)).toMatchObject({
      state: 'observed',
      expires_at: iso(now + 900_000),
    });
  });
});
