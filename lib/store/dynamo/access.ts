/**
 * What the code sends to the DynamoDB state table, declared next to it (issue 8.9): for each request, its
 * IAM action and the prefix of the partition key of every item it touches (`TOKEN#`, `T#`, …; the table
 * of prefixes is `dynamo/schema.ts`). Each module that sends requests to the table declares its own:
 * `STATE_STORE_ACCESS` here, per `StateStore` method (`DynamoStateStore` and the token items it delegates
 * to), and `RATE_LIMITER_ACCESS` in `lib/ratelimit/dynamo.ts`.
 *
 * The CDK stack grants each function exactly the union of what its code paths declare
 * (`functions/access.ts` says which those are, `infra/lambda.ts` turns them into IAM statements, writes
 * limited to their prefixes by `dynamodb:LeadingKeys`). Why declared rather than read off the code: IAM
 * is only enforced on AWS, and DynamoDB Local ignores it, so a request no role allows fails only in
 * production (the replay function's rate-limit counters did). The declarations cannot drift from the
 * code: test/infra/dynamo-access.test.ts runs each module against DynamoDB Local through a client that
 * records every request it sends, and fails on a request not declared or a declaration never sent; and
 * test/infra/stack.test.ts derives each role from the modules its bundle holds (esbuild's metafile).
 */
import type { StateStore } from '../stores.js';

/** The IAM actions of the item and query requests hansard sends (`dynamodb:<action>`). */
export type DynamoAction =
  | 'GetItem'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'ConditionCheckItem'
  | 'Query';

/** Actions that only read: granted on the whole table (and the indexes queried), without a key condition. */
export const READ_ACTIONS: readonly DynamoAction[] = ['GetItem', 'Query'];

/** One kind of request to the state table. */
export interface DynamoAccess {
  action: DynamoAction;
  /**
   * The partition key's prefix, through its first `#` (`TOKEN#` for `TOKEN#{sha256}`); for a query of an
   * index, the prefix of the index's partition key.
   */
  pk: string;
  /** the index a query reads, when not the table */
  index?: string;
}

/** The prefix through the first `#` of a partition key value (`T#acme#S#s_…` → `T#`), or all of it. */
export function pkPrefix(pk: string): string {
  const i = pk.indexOf('#');
  return i === -1 ? pk : pk.slice(0, i + 1);
}

/** The state store's methods (every `StateStore` member but `close`, which sends nothing). */
export type StateMethod = Exclude<keyof StateStore, 'close'>;

const get = (pk: string): DynamoAccess => ({ action: 'GetItem', pk });
const put = (pk: string): DynamoAccess => ({ action: 'PutItem', pk });
const del = (pk: string): DynamoAccess => ({ action: 'DeleteItem', pk });
const upd = (pk: string): DynamoAccess => ({ action: 'UpdateItem', pk });
const query = (pk: string, index?: string): DynamoAccess => ({
  action: 'Query',
  pk,
  ...(index ? { index } : {}),
});

/**
 * What each `DynamoStateStore` method sends, transaction items counted as their own actions (DynamoDB
 * authorizes each item of a `TransactWriteItems` as a Put/Update of that item).
 */
export const STATE_STORE_ACCESS: Record<StateMethod, readonly DynamoAccess[]> = {
  createTenant: [put('TENANT#')],
  tenantExists: [get('TENANT#')],
  // the tenant item's own limits (issue 17.1, 17.3): read by every limited request (cached 30 s), set
  // by the operator's CLI only (`OPERATOR_STATE_METHODS`: no function's role may change them)
  getTenantSettings: [get('TENANT#')],
  setTenantSettings: [upd('TENANT#')],
  // the token, its id guard and (for a minted token) the parent's child link `TOKENID#{parent}`
  putToken: [put('TOKEN#'), put('TOKENID#')],
  getTokenByHash: [get('TOKEN#')],
  listTokens: [query('T#', 'gsi1')],
  // through the id guard; the token and (for a minted token) its child link are marked revoked
  revokeToken: [get('TOKENID#'), get('TOKEN#'), upd('TOKEN#'), upd('TOKENID#')],
  touchToken: [upd('TOKEN#')],
  getTokenById: [get('TOKENID#'), get('TOKEN#')],
  countLiveChildren: [query('TOKENID#')],
  serverSecret: [put('SECRET#'), get('SECRET#')],
  getWriter: [get('T#')],
  listWriters: [query('T#')],
  getChunk: [get('T#')],
  listChunks: [query('T#')],
  // reads the writer, then one transaction of the writer's own items: writer, chunk record, and the
  // session's digest due mark `DIGEST_DUE#{shard}` when the chunk makes it due (issue 15); then, outside
  // it, updates of the session index and the usage shard (issue 17.1), and of the writer's pending item
  // `PENDING#{tenant}` when one fails; a sweep of the tenant's pending items (a query, at most every
  // 30 s) and, per item found, a transaction of ADDs to the session and usage items and its Delete. The
  // pending items have a prefix of their own so that the only Delete this role needs is of them. The
  // chunk's alert events (a damaged record, issue 28) are Puts `ALERT_OUT#{shard}` of the transaction.
  advanceWriter: [
    get('T#'),
    upd('T#'),
    put('T#'),
    put('DIGEST_DUE#'),
    put('ALERT_OUT#'),
    query('PENDING#'),
    upd('PENDING#'),
    del('PENDING#'),
  ],
  tenantUsage: [query('T#')],
  // the session item and one query of its writers (the exact figures, issue 17.1)
  getSession: [get('T#'), query('T#')],
  countSessions: [query('T#')],
  // one query per board shard `T#{tenant}#BOARD#{n}` and the unsharded partition from before them
  listSessions: [query('T#', 'gsi1')],
  // the session items a listing just read, else one eventually consistent Get each (issue 17.6)
  boardCopies: [get('T#')],
  listSessionSummaries: [query('T#')],
  // a consistent read of the session item; an update of it when the merge changes anything
  mergeSessionSummary: [get('T#'), upd('T#')],
  // the change's alert events (issue 28): Puts `ALERT_OUT#{shard}` in the record's transaction
  putStatus: [put('T#'), upd('T#'), put('ALERT_OUT#')],
  getStatus: [get('T#')],
  putWork: [upd('T#'), put('ALERT_OUT#')],
  getWork: [get('T#')],
  listWork: [query('T#'), query('T#', 'gsi1')],
  // a conditional Put of `T#{tenant}#KEY#…` (with alert events: and their Puts `ALERT_OUT#{shard}`, one
  // transaction); when it is claimed already, a Get of the claim
  claimKey: [put('T#'), get('T#'), put('ALERT_OUT#')],
  // a consistent Get of the claim
  readClaim: [get('T#')],
  getDigestHead: [get('T#')],
  // one transaction: the head `T#{tenant}#S#{sid}`/DIGEST and the due mark put at the head's time; a
  // query of the session's writers; then the mark moved to next_due (Update) or deleted, on condition
  // that no advance replaced it; a Get of the head to name the seq a conflict found
  putDigestHead: [
    put('T#'),
    put('DIGEST_DUE#'),
    query('T#'),
    upd('DIGEST_DUE#'),
    del('DIGEST_DUE#'),
    get('T#'),
  ],
  // one query per due-mark shard
  listDigestsDue: [query('DIGEST_DUE#')],
  // token usage (issue 27, dynamo/usage.ts): the writer's usage item `T#{tenant}#S#{sid}`/`USAGE#{w}`
  // (a conditional Put; an Update keeping a failed follow-up's counts on it), the session's usage item
  // `T#{tenant}#S#{sid}`/`USAGE` and the tenant's usage buckets `T#{tenant}#USAGE#{n}` (Updates of ADDs)
  getWriterUsage: [get('T#')],
  applyWriterUsage: [put('T#'), upd('T#')],
  listWriterUsage: [query('T#')],
  getSessionUsageCounters: [get('T#')],
  getSessionUsageCountersMany: [get('T#')],
  listUsageBuckets: [query('T#')],
  // alerts (issue 28, dynamo/alerts.ts), under prefixes of their own so that the Deletes they need never
  // reach a tenant's records (T#): targets `ALERT#{tenant}`/`TARGET#{id}`, deliveries
  // `ALERT#{tenant}#S#{sid}` (gsi1 `ALERT#{tenant}#T#{target}`), session due marks `ALERT_DUE#{shard}`,
  // outbox events `ALERT_OUT#{shard}`
  // a new target: its Put and the tenant's count `ALERT#{tenant}`/`COUNT` one more (an Update on
  // condition it is below the limit), one transaction; a changed one: a conditional Put
  putAlertTarget: [put('ALERT#'), upd('ALERT#')],
  getAlertTarget: [get('ALERT#')],
  listAlertTargets: [query('ALERT#')],
  // the target's Delete and its tenant's count one fewer (one transaction), then its deliveries as gsi1
  // lists them, one Delete each
  deleteAlertTarget: [del('ALERT#'), upd('ALERT#'), query('ALERT#', 'gsi1')],
  putOutboxEvents: [put('ALERT_OUT#')],
  listDueEvents: [query('ALERT_OUT#')],
  // a Get of the event, of each delivery and of the session's due mark, then one transaction: the
  // event's Delete, the new deliveries' Puts, the due mark's Put
  fanOut: [
    get('ALERT_OUT#'),
    get('ALERT#'),
    get('ALERT_DUE#'),
    del('ALERT_OUT#'),
    put('ALERT#'),
    put('ALERT_DUE#'),
  ],
  rescheduleEvent: [upd('ALERT_OUT#')],
  // a query per due-mark shard, one per session that may be due and not passed over (at most 256); its
  // mark then deleted (none pending) or its bound and targets updated (dynamo/alert-marks.ts)
  listDueDeliveries: [query('ALERT_DUE#'), query('ALERT#'), del('ALERT_DUE#'), upd('ALERT_DUE#')],
  claimDelivery: [upd('ALERT#')],
  // the delivery, then its session's due mark (its bound removed: the queue's next may be due at once)
  finishAttempt: [upd('ALERT#'), upd('ALERT_DUE#')],
  // of a target: gsi1; of a session: its partition
  listDeliveries: [query('ALERT#', 'gsi1'), query('ALERT#')],
  // team sign-in (issue 29, dynamo/sign-in.ts), under a prefix of its own (`SIGNIN#{tenant}`, its audit
  // list `SIGNIN#{tenant}#AUDIT`) so that removing a tenant's OIDC settings needs no Delete on T#
  getOidcSettings: [get('SIGNIN#')],
  putOidcSettings: [put('SIGNIN#')],
  deleteOidcSettings: [del('SIGNIN#')],
  getPerson: [get('SIGNIN#')],
  // one Put on condition of the stored version
  putPerson: [put('SIGNIN#')],
  listPeople: [query('SIGNIN#')],
  // one Put on condition that the id is new; its TTL drops it
  appendAudit: [put('SIGNIN#')],
  listAudit: [query('SIGNIN#')],
};

/**
 * The methods only the operator calls (`hansard tenant set --table`, with the operator's own AWS
 * credentials): no function serves them, so none is granted what they send (functions/access.ts).
 */
export const OPERATOR_STATE_METHODS: readonly StateMethod[] = ['setTenantSettings'];

/** `STATE_STORE_ACCESS` of the given methods, then `more`, without repeats. */
export function accessOf(
  methods: readonly StateMethod[],
  more: readonly DynamoAccess[] = [],
): DynamoAccess[] {
  const out = new Map<string, DynamoAccess>();
  for (const a of [...methods.flatMap((m) => STATE_STORE_ACCESS[m]), ...more]) out.set(accessKey(a), a);
  return [...out.values()];
}

/** `Action pk [index]`, e.g. `UpdateItem RL#` or `Query T# gsi1`: one line of a declaration, for comparing. */
export function accessKey(a: DynamoAccess): string {
  return `${a.action} ${a.pk}${a.index ? ` ${a.index}` : ''}`;
}
