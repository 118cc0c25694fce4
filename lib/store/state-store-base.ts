/**
 * What both state adapters (lib/store/sqlite/state-store.ts, lib/store/dynamo/state-store.ts) compose the
 * same way: the entity ports each keeps in an object of its own (a tenant's limits, tokens and server
 * secrets, writers and chunks, the status, work and claimed-key records, the digest index, usage, alerts,
 * sign-in), forwarded here once. An adapter
 * extends `StateStoreBase`, gives it those objects, and writes only the methods it keeps itself.
 */
import type { AlertDelivery, AlertStore, AlertTarget, AttemptResult, OutboxEvent } from './alerts.js';
import type { DigestDue, DigestHead, DigestIndex } from './digests.js';
import type { IdempotencyStore } from './idempotency.js';
import type { Page } from './sessions.js';
import type { AuditEntry, PersonRecord, SignInStore, StoredOidcSettings } from './sign-in.js';
import type { StatusRecord, StatusStore } from './status.js';
import type { TenantSettings, TenantSettingsChange, TenantStore } from './tenants.js';
import type { ServerSecrets, TokenRecord, TokenStore } from './tokens.js';
import type { StoredUsageCounters, UsageBucket, UsageChange, UsageStore, WriterUsage } from './usage.js';
import type { WorkItem, WorkStore } from './work.js';
import type { ChunkRecord, WriterAdvance, WriterRecord, WriterStore } from './writers.js';

/** The entity ports of a state adapter kept in objects of their own, forwarded to them. */
export abstract class StateStoreBase
  implements
    Pick<TenantStore, 'getTenantSettings' | 'setTenantSettings'>,
    StatusStore,
    WorkStore,
    IdempotencyStore,
    DigestIndex,
    TokenStore,
    ServerSecrets,
    WriterStore,
    UsageStore,
    AlertStore,
    SignInStore
{
  /** a tenant's own limits, on its tenant record */
  protected abstract readonly tenantSettings: Pick<TenantStore, 'getTenantSettings' | 'setTenantSettings'>;
  /** status records, work items and claimed keys */
  protected abstract readonly items: StatusStore & WorkStore & IdempotencyStore;
  /** audit digest heads and due marks */
  protected abstract readonly digests: DigestIndex;
  /** tokens, their child links, and the server's secrets */
  protected abstract readonly tokens: TokenStore & ServerSecrets;
  /** writers and their chunk records */
  protected abstract readonly writers: WriterStore;
  /** writer usage records, session usage counters and the tenant's usage buckets (issue 27) */
  protected abstract readonly usage: UsageStore;
  /** alert targets, the outbox and the deliveries (issue 28) */
  protected abstract readonly alerts: AlertStore;
  /** OIDC settings, people and the audit list (issue 29) */
  protected abstract readonly signIn: SignInStore;

  // ---- a tenant's own limits

  getTenantSettings(tenant: string): Promise<TenantSettings | null> {
    return this.tenantSettings.getTenantSettings(tenant);
  }
  setTenantSettings(
    tenant: string,
    change: TenantSettingsChange,
    at: string,
  ): Promise<TenantSettings | null> {
    return this.tenantSettings.setTenantSettings(tenant, change, at);
  }

  // ---- tokens, their child links and server secrets

  putToken(t: TokenRecord): Promise<void> {
    return this.tokens.putToken(t);
  }
  getTokenByHash(hash: string): Promise<TokenRecord | null> {
    return this.tokens.getTokenByHash(hash);
  }
  listTokens(tenant: string): Promise<TokenRecord[]> {
    return this.tokens.listTokens(tenant);
  }
  revokeToken(tenant: string, id: string, at: string): Promise<boolean> {
    return this.tokens.revokeToken(tenant, id, at);
  }
  touchToken(hash: string, at: string): Promise<void> {
    return this.tokens.touchToken(hash, at);
  }
  getTokenById(tenant: string, id: string): Promise<TokenRecord | null> {
    return this.tokens.getTokenById(tenant, id);
  }
  countLiveChildren(tenant: string, parent: string, at: string): Promise<number> {
    return this.tokens.countLiveChildren(tenant, parent, at);
  }
  serverSecret(name: string, candidate: string): Promise<string> {
    return this.tokens.serverSecret(name, candidate);
  }

  // ---- writers and chunks

  getWriter(tenant: string, sid: string, w: string): Promise<WriterRecord | null> {
    return this.writers.getWriter(tenant, sid, w);
  }
  listWriters(tenant: string, sid: string): Promise<WriterRecord[]> {
    return this.writers.listWriters(tenant, sid);
  }
  getChunk(tenant: string, sid: string, w: string, offset: number): Promise<ChunkRecord | null> {
    return this.writers.getChunk(tenant, sid, w, offset);
  }
  listChunks(tenant: string, sid: string, w: string, from: number, limit: number): Promise<ChunkRecord[]> {
    return this.writers.listChunks(tenant, sid, w, from, limit);
  }
  advanceWriter(
    tenant: string,
    sid: string,
    w: string,
    fromLength: number,
    next: WriterAdvance,
  ): Promise<void> {
    return this.writers.advanceWriter(tenant, sid, w, fromLength, next);
  }

  // ---- audit digest heads and due marks

  getDigestHead(tenant: string, sid: string): Promise<DigestHead | null> {
    return this.digests.getDigestHead(tenant, sid);
  }
  putDigestHead(
    tenant: string,
    sid: string,
    prevSeq: number | null,
    head: DigestHead,
    nextDue: string | null,
    expectBytes: number,
  ): Promise<void> {
    return this.digests.putDigestHead(tenant, sid, prevSeq, head, nextDue, expectBytes);
  }
  listDigestsDue(now: string, limit: number): Promise<DigestDue[]> {
    return this.digests.listDigestsDue(now, limit);
  }

  // ---- status, work items and claimed keys

  putStatus(st: StatusRecord, outbox?: OutboxEvent[]): Promise<void> {
    return this.items.putStatus(st, outbox);
  }
  getStatus(tenant: string, sid: string): Promise<StatusRecord | null> {
    return this.items.getStatus(tenant, sid);
  }
  putWork(item: WorkItem, outbox?: OutboxEvent[]): Promise<void> {
    return this.items.putWork(item, outbox);
  }
  getWork(tenant: string, id: string): Promise<WorkItem | null> {
    return this.items.getWork(tenant, id);
  }
  listWork(tenant: string, options: { session?: string; limit: number }): Promise<WorkItem[]> {
    return this.items.listWork(tenant, options);
  }
  claimKey(
    tenant: string,
    scope: string,
    key: string,
    value: string,
    outbox?: OutboxEvent[],
  ): Promise<string> {
    return this.items.claimKey(tenant, scope, key, value, outbox);
  }
  readClaim(tenant: string, scope: string, key: string): Promise<string | null> {
    return this.items.readClaim(tenant, scope, key);
  }

  // ---- token usage and cost (issue 27)

  getWriterUsage(tenant: string, sid: string, w: string): Promise<WriterUsage | null> {
    return this.usage.getWriterUsage(tenant, sid, w);
  }
  applyWriterUsage(
    tenant: string,
    sid: string,
    w: string,
    expectUpto: number | null,
    change: UsageChange,
  ): Promise<void> {
    return this.usage.applyWriterUsage(tenant, sid, w, expectUpto, change);
  }
  listWriterUsage(tenant: string, sid: string): Promise<Map<string, WriterUsage>> {
    return this.usage.listWriterUsage(tenant, sid);
  }
  getSessionUsageCounters(tenant: string, sid: string): Promise<StoredUsageCounters | null> {
    return this.usage.getSessionUsageCounters(tenant, sid);
  }
  getSessionUsageCountersMany(
    tenant: string,
    sids: readonly string[],
  ): Promise<Map<string, StoredUsageCounters>> {
    return this.usage.getSessionUsageCountersMany(tenant, sids);
  }
  listUsageBuckets(tenant: string, fromDay: string, toDay: string): Promise<UsageBucket[]> {
    return this.usage.listUsageBuckets(tenant, fromDay, toDay);
  }

  // ---- alert targets, the outbox and deliveries (issue 28)

  putAlertTarget(target: AlertTarget, o?: { maxTargets?: number }): Promise<void> {
    return this.alerts.putAlertTarget(target, o);
  }
  getAlertTarget(tenant: string, id: string): Promise<AlertTarget | null> {
    return this.alerts.getAlertTarget(tenant, id);
  }
  listAlertTargets(tenant: string): Promise<AlertTarget[]> {
    return this.alerts.listAlertTargets(tenant);
  }
  deleteAlertTarget(tenant: string, id: string): Promise<void> {
    return this.alerts.deleteAlertTarget(tenant, id);
  }
  putOutboxEvents(events: OutboxEvent[]): Promise<void> {
    return this.alerts.putOutboxEvents(events);
  }
  listDueEvents(now: string, limit: number): Promise<OutboxEvent[]> {
    return this.alerts.listDueEvents(now, limit);
  }
  fanOut(event: OutboxEvent, deliveries: AlertDelivery[]): Promise<void> {
    return this.alerts.fanOut(event, deliveries);
  }
  rescheduleEvent(tenant: string, id: string, dueAt: string): Promise<void> {
    return this.alerts.rescheduleEvent(tenant, id, dueAt);
  }
  listDueDeliveries(
    now: string,
    limit: number,
    o?: { perTarget?: number; exclude?: readonly string[] },
  ): Promise<AlertDelivery[]> {
    return this.alerts.listDueDeliveries(now, limit, o);
  }
  claimDelivery(d: AlertDelivery, now: string, until: string): Promise<boolean> {
    return this.alerts.claimDelivery(d, now, until);
  }
  finishAttempt(d: AlertDelivery, result: AttemptResult): Promise<void> {
    return this.alerts.finishAttempt(d, result);
  }
  listDeliveries(
    tenant: string,
    options: { target?: string; sid?: string; limit: number },
  ): Promise<AlertDelivery[]> {
    return this.alerts.listDeliveries(tenant, options);
  }

  // ---- OIDC settings, people and the audit list (issue 29)

  getOidcSettings(tenant: string): Promise<StoredOidcSettings | null> {
    return this.signIn.getOidcSettings(tenant);
  }
  putOidcSettings(settings: StoredOidcSettings): Promise<void> {
    return this.signIn.putOidcSettings(settings);
  }
  deleteOidcSettings(tenant: string): Promise<boolean> {
    return this.signIn.deleteOidcSettings(tenant);
  }
  getPerson(tenant: string, email: string): Promise<PersonRecord | null> {
    return this.signIn.getPerson(tenant, email);
  }
  putPerson(person: PersonRecord, expected: number | null): Promise<void> {
    return this.signIn.putPerson(person, expected);
  }
  listPeople(
    tenant: string,
    opts: { limit: number; cursor?: string | undefined },
  ): Promise<Page<PersonRecord>> {
    return this.signIn.listPeople(tenant, opts);
  }
  appendAudit(entry: AuditEntry): Promise<void> {
    return this.signIn.appendAudit(entry);
  }
  listAudit(tenant: string, opts: { limit: number; cursor?: string | undefined }): Promise<Page<AuditEntry>> {
    return this.signIn.listAudit(tenant, opts);
  }
}
