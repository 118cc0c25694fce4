/**
 * Attack on `POST /v1/work` with an `Idempotency-Key` (seed 004: a pending start is resumed by sending it
 * again; lib/service/work/start.ts `startWork`): ten identical starts under one key sent at once, as a client
 * does that retries while its first request is still in flight. Over real HTTP on loopback, the app over
 * the files and DynamoDB Local (the AWS deployment's state store).
 *
 * On SQLite the same ten land as one item (each request's look-up and write run without yielding); on
 * DynamoDB the look-up (`listWork`) and the write (`putWork`, conditional on a new id only) are separate
 * round trips, so several starts see no item under the key and each creates one.
 */
import { describe, expect, it } from 'vitest';
import { useDynamoServer } from '../support/dynamo-server.js';
import { request } from '../support/http.js';

const srv = useDynamoServer({ reporter: ['report'], reader: ['read'] });

const SID = 's_01M8QD00000000000000000041';

describe('work start idempotency on DynamoDB', () => {
  // Found by this attack (high: 6 items of 10 starts); fixed by claiming the key in the store (claimKey).
  it('ten identical starts under one key at once make one work item', async () => {
    const start = () =>
      request(srv, 'POST', '/v1/work', {
        token: srv.tokens.reporter,
        headers: { 'idempotency-key': 'start-once-0001' },
        json: {
          session: SID,
          system: 'claude-code',
          actor: 'coder',
          subject: { kind: 'free', ref: 'parser' },
          mode: 'implementing',
          summary: 'fixing the parser',
        },
      });
    const answers = await Promise.all(Array.from({ length: 10 }, start));
    for (const a of answers) expect([200, 201], a.text).toContain(a.status);
    expect(new Set(answers.map((a) => a.json.id)).size).toBe(1);
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    const list = await request(srv, 'GET', `/v1/work?session=${SID}`, { token: srv.tokens.reader });
    expect(list.json.items).toHaveLength(1);
  });
});
