/**
 * `readLease` (lib/work/local.ts) on lease files no heartbeat of this machine writes (seed 004 "Failure
 * posture": a corrupt local lease degrades to unknown, never to invented activity): an expiry more than
 * the longest TTL (24 h) past its renewal or past now, or no renewal time, is corrupt. Real files.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/ids.js';
import { leasePath, readLease, renewLease } from '../../lib/work/local.js';

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
});
