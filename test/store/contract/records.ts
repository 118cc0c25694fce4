/**
 * The records the state store's contract suites (./suite.ts) write, and other tests of the stores reuse:
 * ordered times, tokens, writer advances, status records, work items and digest heads, each valid as the
 * port's schema has it and with fields of several JSON shapes, so an adapter that drops or reorders
 * anything shows it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { newId } from '../../../lib/log/format/ids.js';
import type {
  DigestHead,
  StatusRecord,
  TokenRecord,
  WorkItem,
  WriterAdvance,
} from '../../../lib/store/index.js';

/** `2026-01-01T00:00:00.000Z` plus `i` seconds: distinct, ordered ISO times. */
export const at = (i: number): string => new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();

/** A token record of `tenant` with a random hash and id. */
export function tokenRecord(tenant: string, over: Partial<TokenRecord> = {}): TokenRecord {
  const id = over.id ?? `tok_${newId('e').slice(2)}`;
  return {
    id,
    tenant,
    hash: createHash('sha256').update(randomBytes(32)).digest('hex'),
    scopes: ['ingest', 'read'],
    session: null,
    label: null,
    created_at: at(0),
    expires_at: null,
    revoked_at: null,
    last_used_at: null,
    parent: null,
    root: id,
    ...over,
  };
}

/** The advance of a writer from `from` by `bytes` bytes and `lines` lines, its totals given. */
export function advanceOf(
  from: number,
  bytes: number,
  totals: { lines: number; when: number } & Partial<Omit<WriterAdvance, 'chunk' | 'at'>>,
): WriterAdvance {
  const last_seq = totals.last_seq === undefined ? totals.lines : totals.last_seq;
  // a stand-in for lib/audit/chain.ts nextChain: the store keeps what it is given (issue 15)
  const chain = totals.chain ?? createHash('sha256').update(randomBytes(16)).digest('hex');
  return {
    length: from + bytes,
    lines: totals.lines,
    last_seq,
    ended: totals.ended ?? false,
    agent: totals.agent ?? null,
    provenance: totals.provenance ?? null,
    token_id: totals.token_id ?? null,
    token_label: totals.token_label ?? null,
    mixed_tokens: totals.mixed_tokens ?? false,
    at: at(totals.when),
    chain,
    digest_due: totals.digest_due ?? false,
    chunk: {
      offset: from,
      length: bytes,
      sha256: createHash('sha256')
        .update(`${from}:${bytes}:${randomBytes(8).toString('hex')}`)
        .digest('hex'),
      lines: totals.lines,
      last_seq,
      chain,
    },
  };
}

/** A status of one report made at time `when`, with events of several JSON shapes, at `version`. */
export function statusOf(tenant: string, sid: string, when: number, version = 1): StatusRecord {
  return {
    tenant,
    sid,
    reports: [
      {
        state: 'working',
        note: `step ${when}: naïve café ✓`,
        events: [
          {
            kind: 'tests',
            claim: 'unit tests pass',
            evidence: [{ ref: 'e_01', n: 3.5, ok: true, none: null }],
          },
          { kind: 'note', tags: ['a', 'b'], nested: { deep: { list: [1, [2, 3]] } } },
        ],
        events_dropped: 0,
        reported_by: 'tok_REPORTER',
        reported_at: at(when),
      },
    ],
    dropped_events: 0,
    dropped_reports: 0,
    version,
  };
}

/** A work item of `sid` started at time `when` (ids sort by it), at `version`. */
export function workOf(tenant: string, sid: string, when: number, version = 1): WorkItem {
  return {
    tenant,
    id: `wk_${newId('e', Date.UTC(2026, 0, 1) + when * 1000).slice(2)}`,
    session: sid,
    system: 'claude-code',
    actor: 'coder',
    subject: { kind: 'session', ref: sid },
    mode: 'implementing',
    summary: `step ${when}: naïve café ✓`,
    ttl_seconds: 900,
    state: 'active',
    outcome: null,
    waiting_on: null,
    started_at: at(when),
    lease_expires_at: at(when + 900),
    last_heartbeat_at: at(when),
    last_reported: { op: 'start', at: at(when) },
    history: [{ op: 'start', at: at(when), summary: 'first', nested: { list: [1, [2]] } }],
    applied: [{ key: 'key-00000001', op: 'start', hash: 'ab'.repeat(32), at: at(when) }],
    updated_at: at(when),
    version,
  };
}

/** A digest head of seq `seq` written at `at(when)`. */
export function headOf(seq: number, when: number, over: Partial<DigestHead> = {}): DigestHead {
  return {
    seq,
    sha256: String(seq).padStart(64, 'a'),
    signature: `sig-${seq}`,
    at: at(when),
    writers: [{ w: newId('w'), length: 10 * seq, lines: seq, chain: 'c'.repeat(64), ended: false }],
    closed: false,
    unchanged: 0,
    changed_at: at(when),
    ...over,
  };
}
