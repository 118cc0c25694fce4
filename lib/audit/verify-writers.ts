/**
 * The writers' side of the offline verifier (issue 15.3): the chunks every digest lists must tile each
 * writer's segment from byte 0, and their chain (`nextChain` from GENESIS_CHAIN) must equal what each
 * digest states for the writer (`writers[].chain`). Answers, per writer, the attested chunks in order
 * for `locateChunks`.
 */
import { GENESIS_CHAIN, nextChain } from './chain.js';
import type { AttestedChunk } from './locate-chunks.js';
import type { AuditFinding, SignedDigest } from './schemas.js';

interface WriterState {
  length: number;
  /** null after a missing digest: unknown until a digest states it again */
  chain: string | null;
  chunks: AttestedChunk[];
}

/**
 * Replays the chunks of `digests` (valid ones, ascending seq) per writer. Where a digest is missing
 * (a seq gap) the bytes it attested are unknown: they are taken as they are (`sha256: ''`) and the
 * chain is picked up again from the next digest's `writers[].chain`.
 */
export function tileWriters(digests: SignedDigest[]): {
  writers: Map<string, AttestedChunk[]>;
  findings: AuditFinding[];
} {
  const state = new Map<string, WriterState>();
  const findings: AuditFinding[] = [];
  // the first mismatch of a writer is named; what follows from it for that writer is not repeated
  const reported = new Set<string>();
  const mismatch = (w: string, seq: number, message: string, offset?: number) =>
    !reported.has(w) &&
    reported.add(w) &&
    findings.push({
      severity: 'error',
      code: 'writer_chain_mismatch',
      w,
      seq,
      ...(offset !== undefined ? { offset } : {}),
      message,
    });
  let prevSeq = 0;
  for (const d of digests) {
    const afterGap = d.seq !== prevSeq + 1;
    prevSeq = d.seq;
    if (afterGap) for (const st of state.values()) st.chain = null;
    const get = (w: string): WriterState => {
      let st = state.get(w);
      if (!st) {
        st = { length: 0, chain: afterGap && d.seq > 1 ? null : GENESIS_CHAIN, chunks: [] };
        state.set(w, st);
      }
      return st;
    };
    const fill = (st: WriterState, to: number, seq: number) => {
      // bytes a missing digest attested: not checkable, not flagged twice (digest_missing names it)
      st.chunks.push({ offset: st.length, length: to - st.length, sha256: '', seq });
      st.length = to;
    };
    for (const c of d.chunks) {
      const st = get(c.w);
      if (c.offset !== st.length) {
        if (st.chain === null && c.offset > st.length) fill(st, c.offset, d.seq - 1);
        else {
          mismatch(
            c.w,
            d.seq,
            `digest seq ${d.seq} lists a chunk of ${c.w} at offset ${c.offset}, but the attested bytes end at ${st.length}`,
            c.offset,
          );
        }
      }
      // placed where the writer's bytes end, so the segment is still checked chunk by chunk
      st.chunks.push({ offset: st.length, length: c.length, sha256: c.sha256, seq: d.seq });
      st.length += c.length;
      if (st.chain !== null) st.chain = nextChain(st.chain, c.offset, c.length, c.sha256);
    }
    const listed = new Set<string>();
    for (const dw of d.writers) {
      listed.add(dw.w);
      const st = get(dw.w);
      if (st.chain === null && dw.length > st.length) fill(st, dw.length, d.seq);
      if (st.length !== dw.length) {
        mismatch(
          dw.w,
          d.seq,
          `digest seq ${d.seq} states ${dw.w} has ${dw.length} bytes, but its chunks attest ${st.length}`,
        );
      } else if (st.chain !== null && st.chain !== dw.chain) {
        mismatch(
          dw.w,
          d.seq,
          `digest seq ${d.seq} states ${dw.w}'s chain ${dw.chain.slice(0, 12)}…, but its chunks chain to ${st.chain.slice(0, 12)}…`,
        );
      }
      st.chain = dw.chain;
      st.length = dw.length;
    }
    for (const w of state.keys()) {
      if (!listed.has(w))
        mismatch(w, d.seq, `digest seq ${d.seq} does not list writer ${w}, attested before`);
    }
  }
  return { writers: new Map([...state].map(([w, st]) => [w, st.chunks])), findings };
}
