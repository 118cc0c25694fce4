/**
 * Issue 15 attack: a read-only token makes the server write signed digests without bound.
 * `POST /v1/sessions/{sid}/digests` (scope `read`) writes and stores a new signed digest at every call,
 * also when nothing changed since the head. Digests are kept forever (no quota counts them: the
 * tenant's quota is segment bytes), each one holds every writer's state (a session of many writers makes
 * each digest large), every later export carries all of them and every verify checks all of them. Seen
 * on `hansard serve` with --rate-limit 0: 300 POSTs by a read token in 4.2 s stored 300 digests
 * (1.4 MB for 2 writers); the default rate limit (600 a minute per token) still allows 864,000 a day.
 * A read token is what an auditor or a dashboard holds: it should not be able to grow storage.
 *
 * Real server on loopback signing with a LocalKeyring.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { uploadGenerated, useSigningServer } from '../support/export-bundle.js';
import { request } from '../support/http.js';

const { srv } = useSigningServer('hansard-attack-flood-keys-');

let sid: string;

beforeAll(async () => {
  ({ sid } = await uploadGenerated(srv, 40, 2));
}, 60_000);

describe('issue 15 attack: POST …/digests by a read token', () => {
  it('100 POSTs with nothing changed in between do not store 100 digests', async () => {
    const seqs: number[] = [];
    for (let i = 0; i < 100; i++) {
      const a = await request(srv, 'POST', `/v1/sessions/${sid}/digests`, { token: srv.tokens.reader });
      // 201 when this call signed a digest, 200 when it answered the head as it was (`fresh: false`).
      expect([200, 201], a.text).toContain(a.status);
      seqs.push((a.json as { seq: number }).seq);
    }
    const stored = readdirSync(join(srv.dataDir, 'tenants', srv.tenant.name, 'sessions', sid, 'digests'));
    // On the code under attack: seqs 1..100 (or 2..101) and 100+ files, one per call.
    expect(stored.length).toBeLessThanOrEqual(3);
    expect(new Set(seqs).size).toBeLessThanOrEqual(2);
  }, 60_000);
});
