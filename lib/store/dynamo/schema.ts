/**
 * The DynamoDB table of the AWS `StateStore` (DESIGN §5), shared by the adapter, the CDK stack and the
 * tests: attribute and index names, the key of every item, and `createTableInput` for tests and the CLI.
 *
 * One table, `pk`/`sk` strings, TTL attribute `expires_at` (epoch seconds, Number), one GSI `gsi1` on
 * `gsi1pk`/`gsi1sk` (strings, projection ALL):
 *
 * | item            | pk                     | sk                      | gsi1pk                | gsi1sk               |
 * |-----------------|------------------------|-------------------------|-----------------------|----------------------|
 * | tenant          | `TENANT#{name}`        | `TENANT`                |                       |                      |
 * | token           | `TOKEN#{sha256}`       | `TOKEN`                 | `T#{tenant}#TOKENS`   | `{created_at}#{id}`  |
 * | token id guard  | `TOKENID#{id}`         | `TOKENID`               |                       |                      |
 * | token child link| `TOKENID#{parent id}`  | `CHILD#{expires_at}#{id}`|                      |                      |
 * | server secret   | `SECRET#{name}`        | `SECRET`                |                       |                      |
 * | session index   | `T#{tenant}`           | `S#{sid}`               | `T#{tenant}#BOARD#{n}`| `{updated_at}#{sid}` |
 * | writer index    | `T#{tenant}#S#{sid}`   | `W#{w}`                 |                       |                      |
 * | chunk record    | `T#{tenant}#S#{sid}`   | `C#{w}#{offset:015}`    |                       |                      |
 * | (before 17.6)   | `T#{tenant}#S#{sid}`   | `W#{w}#C#{offset:015}`  |                       |                      |
 * | status          | `T#{tenant}#S#{sid}`   | `STATUS`                |                       |                      |
 * | work item       | `T#{tenant}`           | `WORK#{work_id}`        | `T#{tenant}#WORKS#{sid}` | `{work_id}`       |
 * | tenant usage    | `T#{tenant}`           | `USAGE#{shard 0-7}`     |                       |                      |
 * | deferred counts | `PENDING#{tenant}`     | `{sid}#{w}`             |                       |                      |
 * | claimed key     | `T#{tenant}#KEY#{sha256(scope, key)}` | `KEY`    |                       |                      |
 * | rate-limit count| `RL#{token id}`        | `{window start, s}`     |                       |                      |
 * | digest head     | `T#{tenant}#S#{sid}`   | `DIGEST`                |                       |                      |
 * | digest due mark | `DIGEST_DUE#{shard 0-15}` | `{tenant}#{sid}`     |                       |                      |
 * | writer usage    | `T#{tenant}#S#{sid}`   | `USAGE#{w}`             |                       |                      |
 * | session usage   | `T#{tenant}#S#{sid}`   | `USAGE`                 |                       |                      |
 * | usage bucket    | `T#{tenant}#USAGE#{shard 0-7}` | `{day}#{agent}#{person}#{model}` (escaped) |  |              |
 * | alert target    | `ALERT#{tenant}`       | `TARGET#{id}`           |                       |                      |
 * | alert targets' count | `ALERT#{tenant}`  | `COUNT`                 |                       |                      |
 * | alert delivery  | `ALERT#{tenant}#S#{sid or ~}` | `D#{target}#{order}#{event}` | `ALERT#{tenant}#T#{target}` | `{order}#{event}` |
 * | alert due mark  | `ALERT_DUE#{shard 0-7}` | `{tenant}#{sid or ~}`  |                       |                      |
 * | outbox event    | `ALERT_OUT#{shard 0-7}` | `{tenant}#{id}`        |                       |                      |
 * | OIDC settings   | `SIGNIN#{tenant}`      | `OIDC`                  |                       |                      |
 * | person (sign-in)| `SIGNIN#{tenant}`      | `PERSON#{email}`        |                       |                      |
 * | audit entry     | `SIGNIN#{tenant}#AUDIT`| `{id}` (`au_` + ULID)   |                       |                      |
 *
 * The session's `gsi1sk` is its `updated_at` followed by `#{sid}`: the board still reads by `updated_at`
 * (ISO 8601 strings of one length sort by time), and sessions updated in the same millisecond page in
 * the same order as the SQLite adapter (sid descending). Its `gsi1pk` is one of `BOARD_SHARDS` board
 * partitions of the tenant, `n` picked by a hash of the sid (issue 17.1: one partition per tenant took
 * every session's moves); items written before the shards keep `T#{tenant}#BOARD` until they next move,
 * and the listing reads that partition too (`boardPartitions`).
 *
 * Chunk records sort under `C#` (issue 17.6), apart from the writer items under `W#`, so one query of
 * `W#` returns a session's writers and nothing else. Writers indexed before that keep their chunk
 * records at `W#{w}#C#{offset:015}` (their writer item has no `chunk_keys` attribute): `keys.legacyChunk`. Only the rate-limit counters
 * (`lib/ratelimit/dynamo.ts`), work items, claimed keys, finished alert deliveries and audit entries set
 * `expires_at`: a token's own expiry is
 * the ISO attribute `token_expires_at`, because an expired token is still listed (as in SQLite) and
 * must not be removed by TTL.
 *
 * The tenant item holds the tenant's own limits when an operator set them (issue 17.1, 17.3:
 * `quota_bytes`, `rate_limit_per_minute`, `settings_updated_at`; absent: the deployment's), read by
 * dynamo/tenants.ts.
 *
 * A tenant's stored bytes are a running total that every writer advance ADDs to right after its
 * transaction (issue 17.1: the transaction touches the writer's own items only), spread over
 * `USAGE_SHARDS` items chosen by session id, so that no one item takes every chunk of the tenant. Reading
 * the usage sums the shards (one query of a few small items), at most every 30 s per process.
 * The session item's `writers`, `lines` and `bytes` are ADDed the same way; the writer items are the
 * truth they are counted from (docs/adr/0008-no-hot-keys-on-ingest.md). Counts whose follow-up failed for
 * good wait in a partition of their own, `PENDING#{tenant}` (an item per writer, its deltas ADDed),
 * until a sweep applies them (dynamo/pending.ts): one query finds every pending count of the tenant, and
 * keeping one does not write `T#{tenant}`, the partition whose throttling made it pending.
 *
 * Token usage (issue 27, dynamo/usage.ts): a writer's usage record sits beside its writer item (under
 * `USAGE#`, which sorts before `W#`, so the writers' `W#` range never meets it), the session's usage
 * counters in one item of the session's partition, and the tenant's usage buckets in `USAGE_SHARDS`
 * partitions of their own chosen by session id (`usageBucketShard`), each bucket's sort key its UTC day
 * first, so a range of days is one `BETWEEN` per shard (`usageBucketSk`).
 *
 * Alerts (issue 28, dynamo/alerts.ts) live under prefixes of their own (`ALERT#`, `ALERT_DUE#`,
 * `ALERT_OUT#`), not `T#`: a function that removes a target's deliveries is granted DeleteItem on those
 * only, never on a tenant's records. An outbox event is keyed by its id (a second write of it is the same
 * item) in one of `ALERT_SHARDS` partitions, which the worker queries each. A tenant's deliveries of one
 * session sit in one partition, a (target, session) queue one sort-key range in `order`; gsi1 lists a
 * target's deliveries newest first. A session with pending deliveries has a due mark (made by `fanOut`,
 * removed by the worker's listing once none is pending), so the worker reads only those sessions, and
 * only once one of them may be due (the mark's `due_at`, a lower bound: dynamo/alert-marks.ts), and skips
 * it while every target it names (`targets`, a superset of those with pending deliveries there) is busy.
 * A tenant's targets are counted in `ALERT#{tenant}`/`COUNT`, updated in each target's Put and Delete
 * transaction, so that the limit of targets is a condition of the write.
 *
 * Team sign-in (issue 29, dynamo/sign-in.ts) lives under `SIGNIN#`, not `T#`, for the reason alerts do
 * (removing a tenant's OIDC settings is a DeleteItem); an audit entry carries the table's TTL.
 *
 * A session due an audit digest (issue 15) has one mark item in one of `DIGEST_DUE_SHARDS` partitions
 * (chosen by tenant and session id), so that the digester finds the due sessions of every tenant with
 * one query per shard, and no single partition takes every ingest's mark.
 */
import { createHash } from 'node:crypto';
import type { CreateTableCommandInput, UpdateTimeToLiveCommandInput } from '@aws-sdk/client-dynamodb';
import { USAGE_SHARDS as USAGE_BUCKET_SHARDS, type UsageBucketKey } from '../usage.js';

/** Partition and sort key attribute names of the table. */
export const PK = 'pk';
export const SK = 'sk';
/** The one global secondary index: its name and key attributes. */
export const GSI1 = 'gsi1';
export const GSI1_PK = 'gsi1pk';
export const GSI1_SK = 'gsi1sk';
/** The TTL attribute: epoch seconds (Number). DynamoDB deletes expired items within about two days. */
export const TTL_ATTRIBUTE = 'expires_at';

/** The key of one item. */
export interface ItemKey {
  pk: string;
  sk: string;
}

/** Item keys (DESIGN §5). Every part is a validated id or name before it reaches these. */
export const keys = {
  tenant: (name: string): ItemKey => ({ pk: `TENANT#${name}`, sk: 'TENANT' }),
  token: (hash: string): ItemKey => ({ pk: `TOKEN#${hash}`, sk: 'TOKEN' }),
  /** makes token ids unique (as the SQLite primary key does) and finds a token's hash by id */
  tokenId: (id: string): ItemKey => ({ pk: `TOKENID#${id}`, sk: 'TOKENID' }),
  /**
   * a token minted by `parent`, beside the parent's id guard and sorted by expiry (`~` for none), so that
   * its live children are one key-range count
   */
  tokenChild: (parent: string, expiresAt: string | null, id: string): ItemKey => ({
    pk: `TOKENID#${parent}`,
    sk: `${CHILD_PREFIX}${expiresAt ?? '~'}#${id}`,
  }),
  /** a secret of the server (the cursor-signing key), written once by whoever needs it first */
  serverSecret: (name: string): ItemKey => ({ pk: `SECRET#${name}`, sk: 'SECRET' }),
  session: (tenant: string, sid: string): ItemKey => ({ pk: `T#${tenant}`, sk: `S#${sid}` }),
  writer: (tenant: string, sid: string, w: string): ItemKey => ({ pk: sessionPk(tenant, sid), sk: `W#${w}` }),
  /** a chunk record of a writer indexed since issue 17.6 (`CHUNK_KEYS` on its writer item) */
  chunk: (tenant: string, sid: string, w: string, offset: number): ItemKey => ({
    pk: sessionPk(tenant, sid),
    sk: `C#${w}#${String(offset).padStart(15, '0')}`,
  }),
  /** a chunk record of a writer indexed before issue 17.6: right after its writer item */
  legacyChunk: (tenant: string, sid: string, w: string, offset: number): ItemKey => ({
    pk: sessionPk(tenant, sid),
    sk: `W#${w}#C#${String(offset).padStart(15, '0')}`,
  }),
  status: (tenant: string, sid: string): ItemKey => ({ pk: sessionPk(tenant, sid), sk: 'STATUS' }),
  /** a work item (seed 004) beside the tenant's session index entries */
  work: (tenant: string, id: string): ItemKey => ({ pk: `T#${tenant}`, sk: `${WORK_PREFIX}${id}` }),
  /** one shard of a tenant's usage total; `usageShard(sid)` picks a session's */
  usage: (tenant: string, shard: number): ItemKey => ({ pk: `T#${tenant}`, sk: `${USAGE_PREFIX}${shard}` }),
  /** the counts of writer `w` whose follow-up failed for good, until a sweep applies them (dynamo/pending.ts) */
  pending: (tenant: string, sid: string, w: string): ItemKey => ({
    pk: pendingPk(tenant),
    sk: `${sid}#${w}`,
  }),
  /** a claimed key (`StateStore.claimKey`): `hash` is the SHA-256 of its scope and key, hex */
  claim: (tenant: string, hash: string): ItemKey => ({ pk: `T#${tenant}#KEY#${hash}`, sk: 'KEY' }),
  /** the newest audit digest of a session (`DigestHead`, issue 15) */
  digestHead: (tenant: string, sid: string): ItemKey => ({ pk: sessionPk(tenant, sid), sk: 'DIGEST' }),
  /** the mark of a session due a digest, in its shard (`digestDueShard`) */
  digestDue: (tenant: string, sid: string): ItemKey => ({
    pk: digestDuePk(digestDueShard(tenant, sid)),
    sk: `${tenant}#${sid}`,
  }),
  /** a writer's token usage record (issue 27), beside its writer item */
  writerUsage: (tenant: string, sid: string, w: string): ItemKey => ({
    pk: sessionPk(tenant, sid),
    sk: `${WRITER_USAGE_PREFIX}${w}`,
  }),
  /** the token usage counters of a session (issue 27): the sum its writers' records added */
  sessionUsage: (tenant: string, sid: string): ItemKey => ({
    pk: sessionPk(tenant, sid),
    sk: SESSION_USAGE_SK,
  }),
  /** a tenant's usage bucket (issue 27) as one session adds to it: in that session's bucket shard */
  usageBucket: (tenant: string, sid: string, key: UsageBucketKey): ItemKey => ({
    pk: usageBucketPk(tenant, usageBucketShard(sid)),
    sk: usageBucketSk(key),
  }),
  /** an alert target (issue 28) */
  alertTarget: (tenant: string, id: string): ItemKey => ({ pk: `ALERT#${tenant}`, sk: `TARGET#${id}` }),
  /** how many alert targets a tenant has (issue 28): `n`, added to and taken from with each target */
  alertTargetCount: (tenant: string): ItemKey => ({ pk: `ALERT#${tenant}`, sk: 'COUNT' }),
  /** an outbox event (issue 28), in its shard (`alertShard`) */
  alertOutbox: (tenant: string, id: string): ItemKey => ({
    pk: `${ALERT_OUT_PREFIX}${alertShard(`${tenant}#${id}`)}`,
    sk: `${tenant}#${id}`,
  }),
  /** a delivery of an event to a target: its (target, session) queue is the range `D#{target}#` */
  alertDelivery: (
    tenant: string,
    sid: string | null,
    target: string,
    order: string,
    eventId: string,
  ): ItemKey => ({
    pk: alertSessionPk(tenant, sid),
    sk: `D#${target}#${order}#${eventId}`,
  }),
  /** the mark of a session with pending deliveries, in its shard */
  alertDue: (tenant: string, sid: string | null): ItemKey => ({
    pk: `${ALERT_DUE_PREFIX}${alertShard(`${tenant}#${sid ?? NO_SID}`)}`,
    sk: `${tenant}#${sid ?? NO_SID}`,
  }),
  /** a tenant's OIDC settings (issue 29) */
  oidcSettings: (tenant: string): ItemKey => ({ pk: `SIGNIN#${tenant}`, sk: 'OIDC' }),
  /** a person of a tenant (issue 29): the tenant's people are the range `PERSON#`, by email */
  person: (tenant: string, email: string): ItemKey => ({ pk: `SIGNIN#${tenant}`, sk: `PERSON#${email}` }),
  /** an audit entry (issue 29): a tenant's audit list is one partition, in id (time) order */
  auditEntry: (tenant: string, id: string): ItemKey => ({ pk: `SIGNIN#${tenant}#AUDIT`, sk: id }),
  /** a fixed-window request counter of one token (`windowStart` in epoch seconds) */
  rateLimit: (tokenId: string, windowStart: number): ItemKey => ({
    pk: `RL#${tokenId}`,
    sk: String(windowStart),
  }),
};

/**
 * The value of a writer item's `chunk_keys` attribute when its chunk records are under `C#{w}#…`
 * (`keys.chunk`); a writer item without it keeps them under `W#{w}#C#…` (`keys.legacyChunk`).
 */
export const CHUNK_KEYS = 2;

/** The sort-key prefix of token child links (`keys.tokenChild`). */
export const CHILD_PREFIX = 'CHILD#';
/** The sort key prefix of work items in a tenant's partition. */
export const WORK_PREFIX = 'WORK#';

/** How many items a tenant's usage total is spread over, and the sort-key prefix they share. */
export const USAGE_SHARDS = 8;
export const USAGE_PREFIX = 'USAGE#';

/** The usage shard of a session: FNV-1a of its id, so a session's chunks always add to one item. */
export function usageShard(sid: string): number {
  return fnv1a(sid) % USAGE_SHARDS;
}

/**
 * How many board partitions a tenant's sessions are spread over (`gsiKeys.board`). Every move of a
 * session on the board, and every counter a chunk adds to its session item (the GSI projects all
 * attributes), writes its board partition; 8 of them spread a tenant's ingest over 8 GSI partitions, and
 * a board page reads 8 (+1 from before the shards) small queries instead of one (docs/deploy.md).
 */
export const BOARD_SHARDS = 8;

/** The board shard of a session: FNV-1a of its id, 0 to `BOARD_SHARDS - 1`. */
export function boardShard(sid: string): number {
  return fnv1a(`board#${sid}`) % BOARD_SHARDS;
}

/** The sort-key prefix of writer usage records, and the sort key of the session's usage counters. */
export const WRITER_USAGE_PREFIX = 'USAGE#';
export const SESSION_USAGE_SK = 'USAGE';

/** The partition of one shard of a tenant's usage buckets: `T#{tenant}#USAGE#{shard}`. */
export function usageBucketPk(tenant: string, shard: number): string {
  return `T#${tenant}#USAGE#${shard}`;
}

/** The usage bucket shard of a session: FNV-1a of its id (as `usageShard`), 0 to the port's `USAGE_SHARDS` − 1. */
export function usageBucketShard(sid: string): number {
  return fnv1a(sid) % USAGE_BUCKET_SHARDS;
}

/** Past this many UTF-8 bytes, a bucket key part is stored in the sort key as `~{sha256 hex}`. */
const KEY_PART_MAX_BYTES = 300;

/**
 * A usage bucket's sort key: `{day}#{agent}#{person}#{model}`, the day first so that a range of days is a
 * `BETWEEN` of the sort key. The names are escaped (`%`, `#` and `~` as `%XX`), so a `#` in a name cannot
 * make two keys one; a part longer than `KEY_PART_MAX_BYTES` once escaped (the port allows 200 UTF-16
 * units, up to 600 bytes each, past DynamoDB's 1,024-byte sort key for three) is `~` and the SHA-256 of
 * the name, which no escaped name starts with. The names themselves are attributes of the item.
 */
export function usageBucketSk(key: UsageBucketKey): string {
  return [key.day, keyPart(key.agent), keyPart(key.person), keyPart(key.model)].join('#');
}

function keyPart(name: string): string {
  const escaped = name.replace(/[%#~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  if (Buffer.byteLength(escaped, 'utf8') <= KEY_PART_MAX_BYTES) return escaped;
  return `~${createHash('sha256').update(name, 'utf8').digest('hex')}`;
}

/** FNV-1a (32 bits) of the UTF-16 code units of `s`. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** How many partitions the outbox events and the alert due marks are each spread over. */
export const ALERT_SHARDS = 8;
export const ALERT_OUT_PREFIX = 'ALERT_OUT#';
export const ALERT_DUE_PREFIX = 'ALERT_DUE#';
/** The stand-in of a tenant-wide event's absent session in alert keys (a session id is `s_` + a ULID). */
export const NO_SID = '~';

/** The alert shard of `key`: FNV-1a, 0 to `ALERT_SHARDS - 1`. */
export function alertShard(key: string): number {
  return fnv1a(`alert#${key}`) % ALERT_SHARDS;
}

/** The partition of a tenant's deliveries of one session (`~` for tenant-wide events). */
export function alertSessionPk(tenant: string, sid: string | null): string {
  return `ALERT#${tenant}#S#${sid ?? NO_SID}`;
}

/** How many partitions the digest due marks are spread over, and their partition key prefix. */
export const DIGEST_DUE_SHARDS = 16;
export const DIGEST_DUE_PREFIX = 'DIGEST_DUE#';

/** The partition of due marks of one shard: `DIGEST_DUE#{shard}`. */
export function digestDuePk(shard: number): string {
  return `${DIGEST_DUE_PREFIX}${shard}`;
}

/** The due-mark shard of a session: FNV-1a of `{tenant}#{sid}`, 0 to 15. */
export function digestDueShard(tenant: string, sid: string): number {
  return fnv1a(`${tenant}#${sid}`) % DIGEST_DUE_SHARDS;
}

/** GSI keys: a tenant's tokens in creation order, and its board (sessions by last activity). */
export const gsiKeys = {
  tokensPk: (tenant: string): string => `T#${tenant}#TOKENS`,
  tokens: (tenant: string, createdAt: string, id: string) => ({
    gsi1pk: gsiKeys.tokensPk(tenant),
    gsi1sk: `${createdAt}#${id}`,
  }),
  /** a target's alert deliveries, newest first (issue 28) */
  alertTargetPk: (tenant: string, target: string): string => `ALERT#${tenant}#T#${target}`,
  /** a session's work items, newest first by id (a ULID) */
  workPk: (tenant: string, sid: string): string => `T#${tenant}#WORKS#${sid}`,
  /** board partition `shard` of a tenant (`boardShard`) */
  boardPk: (tenant: string, shard: number): string => `T#${tenant}#BOARD#${shard}`,
  /** the one board partition of a tenant before issue 17.1 (items not moved since still sit there) */
  legacyBoardPk: (tenant: string): string => `T#${tenant}#BOARD`,
  board: (tenant: string, updatedAt: string, sid: string) => ({
    gsi1pk: gsiKeys.boardPk(tenant, boardShard(sid)),
    gsi1sk: `${updatedAt}#${sid}`,
  }),
};

/** Every board partition of a tenant that a listing reads: the shards, then the one from before them. */
export function boardPartitions(tenant: string): string[] {
  return [
    ...Array.from({ length: BOARD_SHARDS }, (_, n) => gsiKeys.boardPk(tenant, n)),
    gsiKeys.legacyBoardPk(tenant),
  ];
}

/**
 * The partition of a tenant's deferred counts (`keys.pending`): one query lists them all. Not under `T#`, so
 * the API role's DeleteItem grant reaches these items only (dynamo/access.ts `advanceWriter`).
 */
export function pendingPk(tenant: string): string {
  return `PENDING#${tenant}`;
}

/** The partition of one session: its writer index, chunk records and status. */
export function sessionPk(tenant: string, sid: string): string {
  return `T#${tenant}#S#${sid}`;
}

/**
 * The `CreateTable` request for the state table (on-demand capacity). Tests and `hansard` use it against
 * DynamoDB Local; the CDK stack declares the same names.
 * @example
 * await client.send(new CreateTableCommand(createTableInput('hansard-state')));
 * await client.send(new UpdateTimeToLiveCommand(timeToLiveInput('hansard-state')));
 */
export function createTableInput(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: PK, AttributeType: 'S' },
      { AttributeName: SK, AttributeType: 'S' },
      { AttributeName: GSI1_PK, AttributeType: 'S' },
      { AttributeName: GSI1_SK, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: PK, KeyType: 'HASH' },
      { AttributeName: SK, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: GSI1,
        KeySchema: [
          { AttributeName: GSI1_PK, KeyType: 'HASH' },
          { AttributeName: GSI1_SK, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ],
  };
}

/** The `UpdateTimeToLive` request that turns on TTL over `expires_at` (a separate call from CreateTable). */
export function timeToLiveInput(tableName: string): UpdateTimeToLiveCommandInput {
  return {
    TableName: tableName,
    TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
  };
}
