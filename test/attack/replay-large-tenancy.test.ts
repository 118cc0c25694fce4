/**
 * Issue 17.2 attacks: stored replays of large sessions on AWS (lib/service/sessions/large-replay.ts,
 * lib/store/s3/replay-archive.ts, lib/deploy/aws.ts awsReplayBuilder), over s3rver + DynamoDB Local with
 * the real SDK: the AWS app in this process (`createAwsApp`, builds on, an inline size of 1 KiB so small
 * sessions count as large) and the builder as functions/replay-build.ts runs it.
 *
 * Held (passing tests): another tenant's token, a session-bound token on another session, a token
 * without read/board scope and no token at all get no presigned URL and start no build; the URL a
 * tenant gets is for its own tenant/session prefix; a marker that is not JSON or not a job is
 * `not_a_job`.
 *
 * Found as FAULTS and fixed (their tests now guard the fix; each failed before it):
 * - a forged marker could store tenant bravo's session under tenant acme's key (the job named the key);
 *   now a job names no key, the builder names the copy from the job's own tenant and session, and acts
 *   only on the marker of the job's own variant.
 * - a session growing between polls was never answered (a new key, a new build, per poll); now a
 *   variant has one build at a time and a live session gets its last copy for a minute.
 * - a text replay with checked evidence read the whole session at every request (the key held the
 *   checked Declared rows); now the key holds the status record as stored (one read).
 * - a build that could not succeed was answered 202 for 15 minutes; now its error (data_loss, with its
 *   details) is recorded on the marker and answered for a minute.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSession } from '../../bench/gen.js';
import { type S3ReplayWorld, startS3ReplayWorld } from '../../harness/s3-replay-world.js';
import { awsReplayBuilder, createAwsApp } from '../../lib/deploy/aws.js';
import { listSegments } from '../../lib/log/read/session-dir.js';
import { ensureTenant } from '../../lib/service/tenants/bootstrap.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { worldDynamo } from '../support/aws-world.js';

let world: S3ReplayWorld;
let root: string;
let ddb: DynamoDBClient;
// biome-ignore lint/suspicious/noExplicitAny: the app's env type is the app's own
let app: Hono<any>;
let build: (markerKey: string) => Promise<string>;
let acmeAdmin: string;
let bravoAdmin: string;
let a: { sid: string; dir: string };
let a2: { sid: string; dir: string };
let b: { sid: string; dir: string };
let segmentGets = 0;

async function call(method: string, path: string, token: string | null, body?: Uint8Array | string) {
  const res = await app.request(path, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      'content-type': typeof body === 'string' ? 'application/json' : 'application/x-ndjson',
    },
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, text, json: json as Record<string, never> };
}

/** Posts every segment of `dir` as one chunk each with `token`. */
async function upload(dir: string, token: string): Promise<{ sid: string; dir: string }> {
  const sid = dir.split('/').at(-1)!;
  for (const { w, path } of listSegments(dir)) {
    const r = await call(
      'POST',
      `/v1/sessions/${sid}/writers/${w}/chunks?offset=0`,
      token,
      readFileSync(path),
    );
    expect(r.status, r.text).toBe(201);
  }
  return { sid, dir };
}

async function keysUnder(prefix: string): Promise<string[]> {
  const out = await world.s3
    .client()
    .send(new ListObjectsV2Command({ Bucket: world.bucket, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!);
}
const markers = async () => (await keysUnder('replays/')).filter((k) => k.endsWith('.building'));

async function token(admin: string, scopes: string[], session?: string): Promise<string> {
  const r = session
    ? await call('POST', `/v1/sessions/${session}/tokens`, admin, JSON.stringify({ scopes }))
    : await call('POST', '/v1/tokens', admin, JSON.stringify({ scopes, label: scopes.join('-') }));
  expect(r.status, r.text).toBe(201);
  return (r.json as unknown as { token: string }).token;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hansard-attack3-large-'));
  world = await startS3ReplayWorld();
  acmeAdmin = world.token;
  ddb = worldDynamo(world);
  const bravo = await ensureTenant(
    new DynamoStateStore({ tableName: world.env.TABLE_NAME!, client: ddb }) as unknown as Parameters<
      typeof ensureTenant
    >[0],
    'bravo',
    new Date(),
  );
  bravoAdmin = bravo!.token;
  const s3 = world.s3.client();
  // counts the API's reads of segment objects (GetObject under tenants/)
  s3.middlewareStack.add(
    (next, context) => async (args) => {
      const key = (args.input as { Key?: string }).Key ?? '';
      if (context.commandName === 'GetObjectCommand' && key.startsWith('tenants/')) segmentGets++;
      return next(args);
    },
    { step: 'initialize', name: 'count-segment-gets' },
  );
  const clients = { s3, dynamodb: ddb };
  app = createAwsApp({
    clients,
    bucket: world.bucket,
    table: world.env.TABLE_NAME!,
    rateLimitPerMinute: 0,
    log: () => {},
    largeReplays: { inlineBytes: 1024, builds: true },
  });
  build = awsReplayBuilder({ clients, bucket: world.bucket, table: world.env.TABLE_NAME! });
  a = await upload(await generateSession(root, 60, 2), acmeAdmin);
  a2 = await upload(await generateSession(root, 60, 2), acmeAdmin);
  b = await upload(await generateSession(root, 80, 2), bravoAdmin);
}, 300_000);

afterAll(async () => {
  await world?.close();
  ddb?.destroy();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** Asks for the replay until it is stored (running the builder on each new marker); the 303's URL. */
async function replayUrl(sid: string, tokenText: string, query = 'format=ndjson'): Promise<string> {
  for (let k = 0; k < 3; k++) {
    const before = new Set(await markers());
    const r = await call('GET', `/v1/sessions/${sid}/replay?${query}`, tokenText);
    if (r.status === 303) return r.headers.get('location')!;
    expect(r.status, r.text).toBe(202);
    for (const m of (await markers()).filter((x) => !before.has(x))) await build(m);
  }
  throw new Error('no 303 after 3 rounds');
}

async function fetchText(url: string): Promise<string> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return res.text();
}

describe('stored replays: who may start a build or get a URL', () => {
  it('another tenant, a token bound to another session, no read scope and no token: no URL, no build', async () => {
    const before = await markers();
    const ingestOnly = await token(acmeAdmin, ['ingest', 'report']);
    const boundToA2 = await token(acmeAdmin, ['read'], a2.sid);
    const cases: Array<[string | null, number]> = [
      [bravoAdmin, 404],
      [boundToA2, 404],
      [ingestOnly, 403],
      [null, 401],
    ];
    for (const [t, status] of cases) {
      for (const q of ['format=ndjson', 'raw=1', 'format=text']) {
        const r = await call('GET', `/v1/sessions/${a.sid}/replay?${q}`, t);
        expect(r.status, `${q} ${r.text}`).toBe(status);
        expect(r.headers.get('location')).toBeNull();
      }
    }
    expect(await markers()).toEqual(before);
  });

  it("the URL a tenant gets names its own tenant and session, and holds its own session's bytes", async () => {
    const url = await replayUrl(b.sid, bravoAdmin);
    expect(decodeURIComponent(new URL(url).pathname)).toContain(`/replays/bravo/${b.sid}/`);
    const text = await fetchText(url);
    expect(text).toContain(b.sid);
    expect(text).not.toContain(a.sid);
    // a session-bound reader of its own session gets the same copy
    const bound = await token(bravoAdmin, ['read'], b.sid);
    const again = await call('GET', `/v1/sessions/${b.sid}/replay?format=ndjson`, bound);
    expect(again.status).toBe(303);
  });

  it('a marker that is not JSON, or not a job, builds nothing', async () => {
    const s3 = world.s3.client();
    for (const [key, body] of [
      ['replays/acme/x/junk.ndjson.building', '{not json'],
      ['replays/acme/x/other.ndjson.building', JSON.stringify({ tenant: 'acme' })],
    ] as const) {
      await s3.send(new PutObjectCommand({ Bucket: world.bucket, Key: key, Body: body }));
      expect(await build(key)).toBe('not_a_job');
    }
    expect(await build('tenants/acme/whatever')).toBe('not_a_job');
  });
});

describe('FAULTS of stored replays', () => {
  // FAULT (cross-tenant, defence in depth): awsReplayBuilder parses the marker's job with ReplayJob and
  // runs it as written. Nothing checks that job.key is the key of the marker it came from, nor that it
  // begins with `${job.tenant}/${job.sid}/` and ends with the job's format. A marker that names bravo's
  // session with acme's key (what acme's next request will look for) has bravo's transcript stored as
  // acme's copy, and acme's replay is answered 303 to bravo's bytes. Un-skipped: the fetched replay
  // holds bravo's sid (the expectations below fail at `not.toContain(b.sid)`).
  it("a forged build marker cannot store another tenant's session as a tenant's copy", async () => {
    // Was a FAULT: the builder stored the job's session under whatever key the job named. A job names no
    // key now; the builder names the copy from the job's own tenant and session, and acts only on the
    // marker of the job's own variant.
    const forgedJob = {
      tenant: 'bravo',
      sid: b.sid,
      format: 'ndjson',
      raw: false,
      caller: { id: 'tok_forged', scopes: ['read'], session: null },
    };
    // at acme's variant, a job of bravo's session: not its own marker
    const atAcme = `replays/acme/${a.sid}/ndjson.building`;
    await world.s3.client().send(
      new PutObjectCommand({
        Bucket: world.bucket,
        Key: atAcme,
        Body: JSON.stringify({ job: forgedJob, started_at: new Date().toISOString(), state: 'building' }),
      }),
    );
    expect(await build(atAcme)).toBe('not_a_job');
    // at bravo's own variant: built, but as bravo's copy, never under acme/
    const atBravo = `replays/bravo/${b.sid}/ndjson.building`;
    await world.s3.client().send(
      new PutObjectCommand({
        Bucket: world.bucket,
        Key: atBravo,
        Body: JSON.stringify({ job: forgedJob, started_at: new Date().toISOString(), state: 'building' }),
      }),
    );
    // (bravo's copy may be there from the tests above)
    expect(['built', 'already_stored']).toContain(await build(atBravo));
    for (const k of await keysUnder('replays/acme/')) {
      if (k.endsWith('.building')) continue;
      const got = await world.s3.client().send(new GetObjectCommand({ Bucket: world.bucket, Key: k }));
      expect(await got.Body!.transformToString('utf8')).not.toContain(b.sid);
    }
    // acme's own request is never answered with bravo's bytes
    const r = await call('GET', `/v1/sessions/${a.sid}/replay?format=ndjson`, acmeAdmin);
    if (r.status === 303) {
      const text = await fetchText(r.headers.get('location')!);
      expect(text).not.toContain(b.sid);
      expect(text).toContain(a.sid);
    } else expect(r.status).toBe(202);
  });

  // FAULT (never answered, unbounded builds): the copy's key holds every writer's indexed length, so a
  // session that gets a chunk between two polls names a new copy at each poll: 202 again, and one more
  // full build (marker + builder run over the whole session) per poll. `hansard replay SID` of a live
  // session polls every 5 s for 30 minutes, starting ~360 builds, and then fails with replay_not_ready.
  // Here 4 polls, each after the builder finished the previous copy and one chunk arrived: 4 x 202 and 4
  // builds, never a 303. Un-skipped: `expect(got303).toBe(true)` fails (and builds is 4).
  it('a session that grows between polls is answered with its last copy, built once (was a FAULT)', async () => {
    const grow = await upload(await generateSession(root, 40, 1), acmeAdmin);
    const [seg] = listSegments(grow.dir);
    let length = readFileSync(seg!.path).length;
    let got303 = false;
    let builds = 0;
    for (let poll = 0; poll < 4; poll++) {
      const before = new Set(await markers());
      const r = await call('GET', `/v1/sessions/${grow.sid}/replay?format=ndjson`, acmeAdmin);
      if (r.status === 303) {
        got303 = true;
        break;
      }
      expect(r.status).toBe(202);
      for (const m of (await markers()).filter((x) => !before.has(x))) {
        builds++;
        expect(await build(m)).toBe('built');
      }
      // the agent writes on: one more line before the client asks again
      const line = `${JSON.stringify({ v: 3, sid: grow.sid, w: seg!.w, seq: 1000 + poll, id: `e_01KBXM00000000000000000${poll}AA`, ts: '2026-11-02T00:00:00.000000Z', mono: 1, type: 'note', author: 'a', text: 'more', redacted: [] })}\n`;
      const c = await call(
        'POST',
        `/v1/sessions/${grow.sid}/writers/${seg!.w}/chunks?offset=${length}`,
        acmeAdmin,
        Buffer.from(line),
      );
      expect(c.status, c.text).toBe(201);
      length += Buffer.byteLength(line);
    }
    expect(builds).toBeLessThanOrEqual(1);
    expect(got303).toBe(true);
  });

  // FAULT (a failure hidden as "building" for 15 minutes at a time): a session one of whose chunk objects
  // is gone answers its inline replay 500 data_loss, but over the inline size the API writes a marker
  // and answers 202; the builder throws (Lambda retries it twice and gives up), the marker stays fresh
  // for BUILD_CLAIM_MS, and every poll is 202 again, so `hansard replay` waits 30 minutes and reports
  // replay_not_ready instead of data_loss. Un-skipped: the second poll's status is 202, not 500.
  it('a build that cannot succeed answers the next requests with its error (was a FAULT)', async () => {
    const lost = await upload(await generateSession(root, 40, 1), acmeAdmin);
    const objects = await keysUnder(`tenants/acme/sessions/${lost.sid}/`);
    expect(objects.length).toBeGreaterThan(0);
    await world.s3.client().send(new DeleteObjectCommand({ Bucket: world.bucket, Key: objects[0]! }));
    const before = new Set(await markers());
    const first = await call('GET', `/v1/sessions/${lost.sid}/replay?format=ndjson`, acmeAdmin);
    expect(first.status).toBe(202);
    const started = (await markers()).filter((x) => !before.has(x));
    expect(started).toHaveLength(1);
    // the builder fails and records why; Lambda's retries of the event then find the failure recorded
    await expect(build(started[0]!)).rejects.toThrow();
    for (let k = 0; k < 2; k++) expect(await build(started[0]!)).toBe('not_building');
    const marker = await world.s3
      .client()
      .send(new GetObjectCommand({ Bucket: world.bucket, Key: started[0]! }));
    expect(marker.Body).toBeTruthy();
    const again = await call('GET', `/v1/sessions/${lost.sid}/replay?format=ndjson`, acmeAdmin);
    expect(again.status, again.text).toBe(500);
    expect(again.json.error).toMatchObject({ code: 'data_loss' });
  });

  // FAULT (cost, unreachable text replays): planReplay computes the text copy's Declared rows before it
  // looks the copy up, and `checkedStatus` checks each declared command/test against the stored
  // transcript: a full corrections pass and merge of every segment, here in the API, at every request.
  // Un-skipped: the request answered 303 from a stored copy read the session's segment objects
  // (segmentGets > 0; a copy found should cost a HEAD and a status read).
  it('a stored text replay with checked evidence is found without reading the session (was a FAULT)', async () => {
    const s = await upload(await generateSession(root, 200, 2), acmeAdmin);
    const report = await call(
      'POST',
      `/v1/sessions/${s.sid}/status`,
      acmeAdmin,
      JSON.stringify({
        state: 'needs_review',
        note: 'tests pass',
        events: [{ kind: 'evidence', evidence: [{ type: 'command', ref: 'npm test', result: 'passed' }] }],
      }),
    );
    expect(report.status, report.text).toBe(201);
    await replayUrl(s.sid, acmeAdmin, 'format=text');
    segmentGets = 0;
    const again = await call('GET', `/v1/sessions/${s.sid}/replay?format=text`, acmeAdmin);
    expect(again.status).toBe(303);
    expect(segmentGets).toBe(0);
  });
});
