/**
 * The writer index of `DynamoStateStore` (dynamo/schema.ts): writer items `T#{tenant}#S#{sid}` / `W#{w}`
 * and their chunk records `C#{w}#{offset:015}` (`W#{w}#C#…` for writers indexed before issue 17.6), and
 * the writer advance (issue 17.1, docs/adr/0008-no-hot-keys-on-ingest.md): one transaction of the
 * writer's own items, then the counts of the session and the tenant outside it, and what of those fails
 * for good kept pending for a sweep (dynamo/pending.ts).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { StateConflictError } from '../errors.js';
import type { ChunkRecord, WriterAdvance, WriterRecord } from '../writers.js';
import { outboxPuts } from './alert-items.js';
import { dueMarkPut } from './digest-index.js';
import { cancellationCodes, compact, type Item, toWriter, update } from './items.js';
import type { DynamoPendingCounts } from './pending.js';
import { CHUNK_KEYS, type ItemKey, keys, PK, SK, sessionPk } from './schema.js';
import type { CountDelta, DynamoSessionIndex } from './sessions.js';
import type { DynamoPrimitives } from './tokens.js';

/**
 * Counts of earlier advances not yet in the session and usage items, as deferrals kept them on the writer
 * item before they went to pending items (dynamo/pending.ts): still read, carried and cleared by the
 * writer's next advance, so that what was deferred before is counted once too.
 */
const UNCOUNTED = {
  lines: 'uncounted_lines',
  bytes: 'uncounted_bytes',
  writers: 'uncounted_writers',
  usage: 'uncounted_usage',
} as const;

/** The `StateStore` writer methods on DynamoDB; each answers as SQLite's does. */
export class DynamoWriterIndex {
  constructor(
    private readonly x: DynamoPrimitives,
    private readonly sessions: DynamoSessionIndex,
    private readonly pending: DynamoPendingCounts,
  ) {}

  /** The writer item `W#{w}` (strongly consistent), or null. */
  async getWriter(tenant: string, sid: string, w: string): Promise<WriterRecord | null> {
    const item = await this.x.get(keys.writer(tenant, sid, w));
    return item ? toWriter(item) : null;
  }

  /**
   * Sorted by w: one strongly consistent query of the session partition's `W#` keys, which hold writer
   * items only (~300 bytes each: 100 writers are 30 KB, 8 RRU). A writer indexed before issue 17.6 has
   * its chunk records among them (`W#{w}#C#…`): from the first such record on, the writers are read one
   * query each, from just past the previous writer's chunks (`W#{w}#D`), as before.
   */
  async listWriters(tenant: string, sid: string): Promise<WriterRecord[]> {
    const out: WriterRecord[] = [];
    let from = 'W#';
    let start: Item | undefined;
    let one = false;
    for (;;) {
      const res = await this.x.doc.send(
        new QueryCommand({
          TableName: this.x.table,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
          ExpressionAttributeValues: { ':pk': sessionPk(tenant, sid), ':from': from, ':to': 'W$' },
          ConsistentRead: true,
          ExclusiveStartKey: start,
          // pages of 200: a session of old writers must not read a megabyte of chunk records at once
          Limit: one ? 1 : 200,
        }),
      );
      let skipTo: string | null = null;
      for (const item of res.Items ?? []) {
        const w = String(item.sk).slice(2).split('#')[0];
        if (item.sk === `W#${w}`) out.push(toWriter(item));
        if (item.sk !== `W#${w}` || one) {
          skipTo = `W#${w}#D`;
          break;
        }
      }
      if (skipTo !== null) {
        // chunk records of an old writer: skip over them, a writer at a time from here on
        from = skipTo;
        start = undefined;
        one = true;
      } else if (res.LastEvaluatedKey) start = res.LastEvaluatedKey;
      else return out;
    }
  }

  /** The chunk record at `offset`: where its writer's records are kept, else where older ones were. */
  async getChunk(tenant: string, sid: string, w: string, offset: number): Promise<ChunkRecord | null> {
    const item =
      (await this.x.get(keys.chunk(tenant, sid, w, offset))) ??
      (await this.x.get(keys.legacyChunk(tenant, sid, w, offset)));
    return item ? toChunk(item) : null;
  }

  /**
   * One Query over the writer's chunk records (sorted by offset), from the key of `from`; when it finds
   * none, the same under the keys of before issue 17.6 (a writer's records are all under one of the two).
   * A page cut short by DynamoDB's 1 MB limit returns fewer: the caller asks again from the last offset.
   */
  async listChunks(
    tenant: string,
    sid: string,
    w: string,
    from: number,
    limit: number,
  ): Promise<ChunkRecord[]> {
    const page = async (key: (o: number) => ItemKey, to: string) =>
      (
        await this.x.doc.send(
          new QueryCommand({
            TableName: this.x.table,
            KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
            ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
            ExpressionAttributeValues: { ':pk': sessionPk(tenant, sid), ':from': key(from).sk, ':to': to },
            Limit: limit,
            ConsistentRead: true,
          }),
        )
      ).Items ?? [];
    let items = await page((o) => keys.chunk(tenant, sid, w, o), `C#${w}#~`);
    if (items.length === 0) items = await page((o) => keys.legacyChunk(tenant, sid, w, o), `W#${w}#C#~`);
    return items.map(toChunk);
  }

  /**
   * After reading the writer (for the deltas and to know whether it is new), one `TransactWriteItems` of
   * the writer's own items only:
   *
   *   absent ──advance(from 0)──▶ length L1 ──advance(from L1)──▶ length L2 …
   *
   * 1. the writer item, on condition `attribute_not_exists(pk)` (new writer) or `length = :from`;
   * 2. the chunk record, on condition `attribute_not_exists(pk)`;
   * 3. only when `next.digest_due` (a writer's first chunk, its end, a chunk after a quiet day: a few per
   *    writer): the session's digest due mark, which must never be missing for an indexed chunk;
   * 4. the chunk's alert events (`next.outbox`, a damaged record): unconditional Puts (dynamo/alerts.ts).
   *
   * Then, outside it (`DynamoSessionIndex.countAdvance`): the session's counters and board position and
   * the tenant's usage, ADDed. A count that fails for good is kept on the writer's pending item
   * (`DynamoPendingCounts.defer`), which a later advance of any writer of the tenant applies, once
   * (`afterAdvance`: this process's next advance, any process's within 30 s). Counts kept on the writer
   * item by deferrals of before (`uncounted_*`) are carried by this advance: subtracted in its own
   * transaction (an ADD), added to its delta. Lengths only grow, so a writer found at `from` when the
   * transaction commits is the one read. Conflicts and throttling are retried (dynamo/retry.ts).
   * @throws StateConflictError (with the stored length) when the writer is not at `fromLength`
   */
  async advanceWriter(
    tenant: string,
    sid: string,
    w: string,
    fromLength: number,
    next: WriterAdvance,
  ): Promise<void> {
    const stored = await this.x.get(keys.writer(tenant, sid, w));
    const cur = stored ? toWriter(stored) : null;
    const curLength = cur?.length ?? 0;
    const conflict = (length: number, what = `writer ${w} is at ${length} bytes, not ${fromLength}`) =>
      new StateConflictError(what, length);
    if (curLength !== fromLength) throw conflict(curLength);

    const carried = {
      lines: numberOf(stored?.[UNCOUNTED.lines]),
      bytes: numberOf(stored?.[UNCOUNTED.bytes]),
      writers: numberOf(stored?.[UNCOUNTED.writers]),
      usage: numberOf(stored?.[UNCOUNTED.usage]),
    };
    const carrying = Object.entries(carried).filter(([, v]) => v !== 0);
    const c = next.chunk;
    // A writer indexed before issue 17.6 keeps its chunk records where its others are.
    const newKeys = cur === null || stored?.chunk_keys === CHUNK_KEYS;
    const writer = update(
      {
        set: {
          tenant,
          sid,
          w,
          length: next.length,
          lines: next.lines,
          ended: next.ended,
          updated_at: next.at,
          chain: next.chain,
          ...(next.last_seq === null ? {} : { last_seq: next.last_seq }),
          // Who put the writer on record (issue 24.1): written with its first chunk only (the condition
          // below makes that chunk's write the one that creates the item), a null kept as NULL so that a
          // later chunk's token never fills it in.
          ...(cur === null
            ? {
                chunk_keys: CHUNK_KEYS,
                provenance: next.provenance,
                token_id: next.token_id,
                token_label: next.token_label,
              }
            : {}),
          // sticky: a later chunk never sets it back
          ...(next.mixed_tokens ? { mixed_tokens: true } : {}),
        },
        setIfAbsent: { created_at: next.at, ...(next.agent === null ? {} : { agent: next.agent }) },
        add: Object.fromEntries(carrying.map(([k, v]) => [UNCOUNTED[k as keyof typeof UNCOUNTED], -v])),
        remove: next.last_seq === null ? ['last_seq'] : [],
      },
      (x) => (cur === null ? `attribute_not_exists(${x.n(PK)})` : `${x.n('length')} = ${x.v(fromLength)}`),
    );
    const chunkKey = newKeys
      ? keys.chunk(tenant, sid, w, c.offset)
      : keys.legacyChunk(tenant, sid, w, c.offset);
    const chunk = compact({
      ...chunkKey,
      tenant,
      sid,
      w,
      offset: c.offset,
      length: c.length,
      sha256: c.sha256,
      lines: c.lines,
      last_seq: c.last_seq,
      chain: c.chain,
    });
    try {
      await this.x.transact([
        { Update: { TableName: this.x.table, Key: keys.writer(tenant, sid, w), ...writer } },
        { Put: { TableName: this.x.table, Item: chunk, ConditionExpression: 'attribute_not_exists(pk)' } },
        ...(next.digest_due ? [dueMarkPut(this.x.table, tenant, sid, next.at)] : []),
        ...outboxPuts(this.x.table, next.outbox),
      ]);
    } catch (err) {
      const codes = cancellationCodes(err);
      if (codes[0] === 'ConditionalCheckFailed') {
        // Another advance won: answer with what it stored.
        throw conflict((await this.getWriter(tenant, sid, w))?.length ?? 0);
      }
      if (codes[1] === 'ConditionalCheckFailed') {
        const now = (await this.getWriter(tenant, sid, w))?.length ?? 0;
        throw conflict(now, `a chunk of writer ${w} is already recorded at offset ${c.offset}`);
      }
      throw err;
    }
    const bytes = next.length - curLength;
    const delta: CountDelta = {
      lines: next.lines - (cur?.lines ?? 0) + carried.lines,
      bytes: bytes + carried.bytes,
      writers: (cur ? 0 : 1) + carried.writers,
      usage: bytes + carried.usage,
    };
    const done = await this.sessions.countAdvance(tenant, sid, delta, next.at);
    const deferred = !done.session || !done.usage;
    if (deferred) await this.pending.defer(tenant, sid, w, delta, done, next.at);
    await this.pending.afterAdvance(tenant, deferred);
  }
}

function numberOf(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}

/** A chunk record item as the port's `ChunkRecord`. */
function toChunk(item: Item): ChunkRecord {
  return {
    offset: item.offset as number,
    length: item.length as number,
    sha256: item.sha256 as string,
    lines: item.lines as number,
    last_seq: (item.last_seq as number | undefined) ?? null,
    ...(typeof item.chain === 'string' ? { chain: item.chain } : {}),
  };
}
