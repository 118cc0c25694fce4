/**
 * A writer's advance as the state store takes it, for the SQLite durability suites (test/durability/
 * group-commit, ingest-descriptors) that count transactions and descriptors, not what an advance holds.
 */
import type { WriterAdvance } from '../../lib/store/index.js';

/** An advance of a writer from `from` by `bytes` (the fields the index keeps; the chain is a stand-in). */
export function plainAdvance(from: number, bytes: number): WriterAdvance {
  const chunk = { offset: from, length: bytes, sha256: 'a'.repeat(64), lines: 1, last_seq: 1, chain: 'c' };
  return {
    length: from + bytes,
    lines: 1,
    last_seq: 1,
    ended: false,
    agent: null,
    provenance: null,
    token_id: null,
    token_label: null,
    mixed_tokens: false,
    chunk,
    chain: 'c',
    digest_due: false,
    at: new Date().toISOString(),
  };
}
