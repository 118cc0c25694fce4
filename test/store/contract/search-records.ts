/**
 * The documents, fixes, batches and queries the search contract (./search.contract.ts) gives an engine:
 * built as the service builds them, their `terms` by lib/service/search/terms.ts (`termsColumn`), so the
 * engine is asked what it will be asked in production.
 */
import { newId } from '../../../lib/log/format/ids.js';
import { termsColumn, termsOf } from '../../../lib/service/search/terms.js';
import type {
  EngineHit,
  EngineQuery,
  SearchCause,
  SearchDoc,
  SearchFix,
  SearchIndex,
  WriterBatch,
} from '../../../lib/store/search.js';

/** Declares one case of the search contract on the case's own new index (./search.contract.ts). */
export type SearchCase = (title: string, fn: (index: SearchIndex) => Promise<void>) => void;

/** µs since the epoch of 2026-12-01T00:00:00Z plus `i` seconds: distinct, ordered instants. */
export const us = (i: number): number => (Date.UTC(2026, 11, 1) + i * 1000) * 1000;
/** The RFC 3339 text of `us(i)`. */
export const tsOf = (i: number): string => new Date(Date.UTC(2026, 11, 1) + i * 1000).toISOString();

/** A document of `sid` by writer `w` at `seq`, `when` seconds in; its terms made from its text and facets. */
export function doc(
  sid: string,
  w: string,
  seq: number,
  text: string,
  over: Partial<Omit<SearchDoc, 'sid' | 'w' | 'seq' | 'text' | 'terms'>> & { when?: number } = {},
): SearchDoc {
  const { when = seq, ...rest } = over;
  const d: Omit<SearchDoc, 'terms'> = {
    sid,
    w,
    seq,
    id: newId('e'),
    ts: tsOf(when),
    at_us: us(when),
    type: 'message',
    field: 'text',
    agent: null,
    person: null,
    person_name: null,
    tool: null,
    cause: null,
    text,
    ...rest,
  };
  return { ...d, terms: termsColumn(d.text, d.tool, d.agent, d.person, d.person_name) };
}

/** A correction by the event (w, seq) of `target`'s `field` to `text`, at `when` seconds in. */
export function fix(
  target: SearchDoc,
  text: string,
  by: { w: string; seq: number; when: number; field?: string },
): SearchFix {
  return {
    sid: target.sid,
    target_id: target.id,
    field: by.field ?? target.field,
    text,
    terms: termsColumn(text),
    at_us: us(by.when),
    w: by.w,
    seq: by.seq,
    by: newId('e'),
  };
}

/** A writer batch of `tenant` from `from` to `to` bytes. */
export function batch(
  tenant: string,
  sid: string,
  w: string,
  from: number,
  to: number,
  docs: SearchDoc[],
  fixes: SearchFix[] = [],
  causes: SearchCause[] = [],
): WriterBatch {
  return { tenant, sid, w, fromLength: from, toLength: to, docs, fixes, causes };
}

/** `d` with the cause key of an agent event whose `caused_by` lists messages: `e:<its id>`. */
export const caused = (d: SearchDoc): SearchDoc => ({ ...d, cause: `e:${d.id}` });

/**
 * The causes an agent event whose `caused_by` lists `messages` files, as lib/service/search/docs.ts files
 * them: under `e:<its id>` (its document's `cause`).
 */
export function causedBy(event: Pick<SearchDoc, 'sid' | 'id'>, ...messages: SearchDoc[]): SearchCause[] {
  return messages.map((m) => ({ sid: event.sid, key: `e:${event.id}`, message_id: m.id }));
}

/**
 * The causes a `turn.start` of `sid` files for its `context_message_ids`: under `t:<turn_id>`, the
 * `cause` of the turn's agent events whose `caused_by` is null.
 */
export function turnContext(sid: string, turnId: string, ...messageIds: string[]): SearchCause[] {
  return messageIds.map((m) => ({ sid, key: `t:${turnId}`, message_id: m }));
}

/**
 * An engine query: each string of `match` (and `exclude`) is one entry, its terms by `termsOf` (one term:
 * a word; several: a phrase). Page 50 from 0 unless told.
 */
export function query(
  match: string[],
  over: { exclude?: string[]; filters?: EngineQuery['filters']; limit?: number; offset?: number } = {},
): EngineQuery {
  return {
    match: match.map((m) => ({ terms: termsOf(m) })),
    exclude: (over.exclude ?? []).map((m) => ({ terms: termsOf(m) })),
    filters: over.filters ?? {},
    limit: over.limit ?? 50,
    offset: over.offset ?? 0,
  };
}

/** The (sid, w, seq) of each hit, in order: what most cases compare. */
export const keysOf = (hits: EngineHit[]): string[] =>
  hits.map((h) => `${h.doc.sid}/${h.doc.w}/${h.doc.seq}`);
/** The key `keysOf` gives `d`. */
export const keyOf = (d: Pick<SearchDoc, 'sid' | 'w' | 'seq'>): string => `${d.sid}/${d.w}/${d.seq}`;

/** The keys of `tenant`'s hits of `q`, sorted (for cases where the order is not what is checked). */
export async function found(index: SearchIndex, tenant: string, q: EngineQuery): Promise<string[]> {
  return keysOf(await index.query(tenant, q)).sort();
}

/** `keyOf` of each document, sorted. */
export const sortedKeys = (...docs: SearchDoc[]): string[] => docs.map(keyOf).sort();
