/**
 * Attacks on `Idempotency-Key` games with work items (lib/service/work/write.ts, keys.ts), over real HTTP on the local
 * stores: a key reused with changed content, for another verb, and a start key resent after the item
 * has been through 50 keyed operations (the item keeps the last 50 keys, MAX_APPLIED).
 */
import { describe, expect, it } from 'vitest';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { reporter: ['report'], reader: ['read'] } });

const SID = 's_01M8QD00000000000000000061';
const owner = { session: SID, system: 'claude-code', actor: 'coder' };
const START = {
  ...owner,
  subject: { kind: 'free', ref: 'parser' },
  mode: 'implementing',
  summary: 'fixing the parser',
};

const post = (path: string, json: object, key: string) =>
  request(srv, 'POST', path, { token: srv.tokens.reporter, json, headers: { 'idempotency-key': key } });

describe('idempotency keys of work items', () => {
  it('holds: a key resent with changed content, or for another verb, is refused 409', async () => {
    const a = await post('/v1/work', START, 'games-key-0001');
    expect(a.status).toBe(201);
    const changed = await post('/v1/work', { ...START, summary: 'something else' }, 'games-key-0001');
    expect(changed.status).toBe(409);
    expect(changed.json.error.code).toBe('idempotency_mismatch');
    const cp = await post(
      `/v1/work/${a.json.id}/checkpoint`,
      { ...owner, summary: 'step two' },
      'games-key-0001',
    );
    expect(cp.status).toBe(409);
    expect(cp.json.error.code).toBe('idempotency_mismatch');
  });

  // Found by this attack (low); fixed: the start's key is claimed in the store, not read from `applied`.
  it('a start resent under its key after 50 keyed checkpoints answers the same item', async () => {
    const a = await post('/v1/work', { ...START, actor: 'coder2' }, 'start-key-0002');
    expect(a.status).toBe(201);
    for (let i = 0; i < 50; i++) {
      const c = await post(
        `/v1/work/${a.json.id}/checkpoint`,
        { ...owner, actor: 'coder2', summary: `step ${i}` },
        `cp-key-${i}-0002`,
      );
      expect(c.status, c.text).toBe(200);
    }
    const again = await post('/v1/work', { ...START, actor: 'coder2' }, 'start-key-0002');
    expect(again.json.id).toBe(a.json.id);
    expect(again.status).toBe(200);
  });
  // Found by this attack (low); fixed: resume's key follows the header's rule (IdempotencyKey).
  it('resume refuses a key the Idempotency-Key header would refuse', async () => {
    const a = await post('/v1/work', { ...START, actor: 'coder3' }, 'start-key-0003');
    expect(a.status).toBe(201);
    const r = await request(srv, 'POST', `/v1/work/${a.json.id}/resume`, {
      token: srv.tokens.reporter,
      json: {
        ...owner,
        actor: 'coder3',
        op: 'checkpoint',
        idempotency_key: 'has spaces \u0000 \u202e and more',
        body: { summary: 'step two' },
      },
    });
    expect(r.status, r.text).toBe(400);
  });
});
