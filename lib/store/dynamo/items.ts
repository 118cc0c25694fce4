/**
 * How `DynamoStateStore` writes and reads items: update expressions, the SDK's cancellation reasons, and
 * the items ⇄ records of the entity ports (lib/store/<entity>.ts) (the layout is in dynamo/schema.ts, DESIGN §5, ADR 4).
 */

import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { askedOf } from '../session-summary.js';
import type { SessionRecord, SessionSummary } from '../sessions.js';
import type { TokenRecord } from '../tokens.js';
import type { WriterRecord } from '../writers.js';

export type Item = Record<string, unknown>;

/** One write of a `TransactWriteItems` request. */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** The parts of an update: SET, SET if absent, ADD, REMOVE; attribute names always go through `#…`. */
export interface UpdateParts {
  set?: Item;
  setIfAbsent?: Item;
  add?: Record<string, number>;
  remove?: string[];
}

/** Collects expression attribute names (`#name`) and values (`:vN`). */
export class Expr {
  readonly names: Record<string, string> = {};
  readonly values: Item = {};
  n(attr: string): string {
    this.names[`#${attr}`] = attr;
    return `#${attr}`;
  }
  v(value: unknown): string {
    const k = `:v${Object.keys(this.values).length}`;
    this.values[k] = value;
    return k;
  }
}

/** An `Update` request's expressions from its parts, with an optional condition. */
export function update(parts: UpdateParts, condition?: (x: Expr) => string) {
  const x = new Expr();
  const set = [
    ...Object.entries(parts.set ?? {}).map(([k, v]) => `${x.n(k)} = ${x.v(v)}`),
    ...Object.entries(parts.setIfAbsent ?? {}).map(
      ([k, v]) => `${x.n(k)} = if_not_exists(${x.n(k)}, ${x.v(v)})`,
    ),
  ];
  const add = Object.entries(parts.add ?? {}).map(([k, v]) => `${x.n(k)} ${x.v(v)}`);
  const remove = (parts.remove ?? []).map((k) => x.n(k));
  const clauses = [
    set.length ? `SET ${set.join(', ')}` : '',
    add.length ? `ADD ${add.join(', ')}` : '',
    remove.length ? `REMOVE ${remove.join(', ')}` : '',
  ];
  const conditionExpression = condition?.(x);
  return {
    UpdateExpression: clauses.filter(Boolean).join(' '),
    ...(conditionExpression ? { ConditionExpression: conditionExpression } : {}),
    ExpressionAttributeNames: x.names,
    ...(Object.keys(x.values).length ? { ExpressionAttributeValues: x.values } : {}),
  };
}

/** The item without its null fields (absent reads back as null). */
export function compact(item: Item): Item {
  return Object.fromEntries(Object.entries(item).filter(([, v]) => v !== null && v !== undefined));
}

export function errorName(err: unknown): string | undefined {
  return (err as { name?: string } | null)?.name;
}

/**
 * The per-item reasons of a cancelled transaction (`None`, `ConditionalCheckFailed`,
 * `TransactionConflict`…), in the order of the request's items; empty for any other error.
 */
export function cancellationCodes(err: unknown): string[] {
  if (errorName(err) !== 'TransactionCanceledException') return [];
  const reasons = (err as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons;
  if (reasons?.length) return reasons.map((r) => r.Code ?? 'None');
  // Without structured reasons the message lists them: "… reasons [ConditionalCheckFailed, None]".
  const listed = /\[([^\]]*)\]\s*$/.exec((err as Error).message ?? '');
  return listed?.[1] ? listed[1].split(',').map((s) => s.trim()) : [];
}

export function toToken(item: Item): TokenRecord {
  return {
    id: item.id as string,
    tenant: item.tenant as string,
    hash: item.hash as string,
    scopes: item.scopes as string[],
    session: (item.session as string | undefined) ?? null,
    label: (item.label as string | undefined) ?? null,
    created_at: item.created_at as string,
    expires_at: (item.token_expires_at as string | undefined) ?? null,
    revoked_at: (item.revoked_at as string | undefined) ?? null,
    last_used_at: (item.last_used_at as string | undefined) ?? null,
    // Tokens stored before chains have neither: they are roots.
    parent: (item.parent as string | undefined) ?? null,
    root: (item.root as string | undefined) ?? (item.id as string),
  };
}

export function toWriter(item: Item): WriterRecord {
  return {
    tenant: item.tenant as string,
    sid: item.sid as string,
    w: item.w as string,
    length: item.length as number,
    lines: item.lines as number,
    last_seq: (item.last_seq as number | undefined) ?? null,
    ended: item.ended === true,
    agent: (item.agent as string | undefined) ?? null,
    // absent on a writer indexed before issue 24.1
    provenance: (item.provenance as string | undefined) ?? null,
    token_id: (item.token_id as string | undefined) ?? null,
    token_label: (item.token_label as string | undefined) ?? null,
    mixed_tokens: item.mixed_tokens === true,
    // absent on a writer indexed before chains were kept (issue 15)
    chain: (item.chain as string | undefined) ?? null,
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}

export function toSession(item: Item): SessionRecord {
  return {
    tenant: item.tenant as string,
    sid: item.sid as string,
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
    writers: (item.writers as number | undefined) ?? 0,
    lines: (item.lines as number | undefined) ?? 0,
    bytes: (item.bytes as number | undefined) ?? 0,
  };
}

/** A session item as `SessionSummary`: summary attributes never set read as null and []. */
export function toSessionSummary(item: Item): SessionSummary {
  const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
  const names = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : []);
  return {
    ...toSession(item),
    title: text(item.title),
    first_note: text(item.first_note),
    people: names(item.people),
    agents: names(item.agents),
    asked: askedOf(item.asked),
    state: text(item.state),
    state_since: text(item.state_since),
    note: text(item.note),
    reported_at: text(item.reported_at),
  };
}
