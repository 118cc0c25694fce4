/**
 * Where each attested chunk of one writer is in its segment file (issue 15.3, DESIGN §6b), and every
 * difference named: modified, deleted, inserted, reordered, truncated, unattested bytes.
 *
 * The walk is linear: chunk after chunk is hashed where it is expected (a clean segment costs one read
 * and two SHA-256 passes: per chunk and whole file). Only at a mismatch does it look for the next
 * anchor (an attested chunk found elsewhere): first at the few offsets a deletion, a same-length edit
 * or a swap would put one (the expected offset plus sums of nearby chunk lengths), then at every line
 * start of a bounded window (an insertion), hashing a candidate only where its known length ends a
 * line. What lies between anchors names the difference.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import type { AuditFinding, AuditFindingCode } from './schemas.js';

/** One attested chunk of a writer, in attested order (offsets tile [0, length)). */
export interface AttestedChunk {
  offset: number;
  length: number;
  /** '' for bytes whose chunks are unknown (their digest is missing): taken as they are, not hashed */
  sha256: string;
  /** the digest seq that lists it */
  seq: number;
}

/** How far around a mismatch the walk looks: chunks ahead (and skipped ones behind), window bytes. */
const NEAR = 8;
const WINDOW_MAX = 64 * 1024 * 1024;
const BLOCK = 1024 * 1024;
const NL = 0x0a;

/** The segment's size, whole-file SHA-256, and a finding per difference from the attested chunks. */
export interface LocateResult {
  size: number;
  sha256: string;
  findings: AuditFinding[];
}

/**
 * Checks `path` (writer `w`'s segment) against its attested chunks, in attested order.
 * @throws Error when the file cannot be read (the caller reports segment_missing before calling)
 */
export async function locateChunks(path: string, w: string, chunks: AttestedChunk[]): Promise<LocateResult> {
  const fh = await open(path, 'r');
  try {
    return await new Walk(fh, (await fh.stat()).size, w, chunks).run(path);
  } finally {
    await fh.close();
  }
}

enum State {
  Unseen = 0,
  Found = 1,
  Resolved = 2,
  Pending = 3,
}

class Walk {
  private readonly state: State[];
  private readonly pending: Array<{ k: number; at: number; line: number; by: number }> = [];
  private readonly findings: AuditFinding[] = [];
  private readonly fileHash = createHash('sha256');
  private fed = 0; // bytes of the file fed to fileHash, in order
  private lp = 0; // line cursor: position
  private ln = 1; // … and the 1-based line there
  private readonly buf = Buffer.allocUnsafe(BLOCK);

  constructor(
    private readonly fh: FileHandle,
    private readonly size: number,
    private readonly w: string,
    private readonly chunks: AttestedChunk[],
  ) {
    this.state = chunks.map(() => State.Unseen);
  }

  async run(path: string): Promise<LocateResult> {
    const { chunks, size } = this;
    const n = chunks.length;
    let q = 0;
    let j = 0;
    let truncatedAt = -1;
    while (j < n) {
      const c = chunks[j]!;
      const fits = q + c.length <= size;
      if (fits && (c.sha256 === '' || (await this.hashAt(q, c.length, true)) === c.sha256)) {
        this.state[j] = State.Found;
        q += c.length;
        j = this.next(j + 1);
        continue;
      }
      const anchor = await this.findAnchor(q, j);
      if (anchor === null) {
        if (q + c.length > size) {
          truncatedAt = j;
          break;
        }
        await this.add('chunk_modified', q, c.length, c.seq, `${this.chunkName(j)} differs from its SHA-256`);
        this.state[j] = State.Resolved;
        q += c.length;
        j = this.next(j + 1);
        continue;
      }
      const { k, p } = anchor;
      if (k < j || this.state[k] === State.Pending) {
        // an earlier chunk skipped as missing is found here: out of order
        const pend = this.pending.findIndex((x) => x.k === k);
        const was = this.pending[pend]!;
        this.pending.splice(pend, 1);
        if (p > q) await this.inserted(q, p, k);
        const by = chunks[was.by]!;
        await this.add(
          'chunks_reordered',
          p,
          chunks[k]!.length,
          chunks[k]!.seq,
          `${this.chunkName(k)} belongs at offset ${was.at} (line ${was.line}), where the chunk attested at offset ${by.offset} (digest seq ${by.seq}) is found; it is found at offset ${p}, after it: the chunks are out of order`,
        );
        this.state[k] = State.Found;
        q = p + chunks[k]!.length;
        continue;
      }
      const skipped: number[] = [];
      for (let i = j; i < k; i++) if (this.state[i] === State.Unseen) skipped.push(i);
      const gap = p - q;
      const skippedBytes = skipped.reduce((s, i) => s + chunks[i]!.length, 0);
      if (skipped.length > 0 && gap > 0 && (gap === skippedBytes || skipped.length === 1)) {
        let at = q;
        for (const i of skipped) {
          const len = skipped.length === 1 ? gap : chunks[i]!.length;
          const changed =
            len === chunks[i]!.length ? '' : ` (now ${len} bytes where ${chunks[i]!.length} were attested)`;
          await this.add(
            'chunk_modified',
            at,
            len,
            chunks[i]!.seq,
            `${this.chunkName(i)} differs from its SHA-256${changed}`,
          );
          this.state[i] = State.Resolved;
          at += len;
        }
      } else {
        const line = await this.lineAt(q);
        for (const i of skipped) {
          this.state[i] = State.Pending;
          this.pending.push({ k: i, at: q, line, by: k });
        }
        if (gap > 0) await this.inserted(q, p, k);
      }
      this.state[k] = State.Found;
      q = p + chunks[k]!.length;
      j = this.next(k + 1);
    }
    if (truncatedAt >= 0) {
      for (let i = truncatedAt; i < n; i++) {
        if (this.state[i] !== State.Unseen) continue;
        const c = chunks[i]!;
        const inside = i === truncatedAt && q < size;
        await this.add(
          'chunk_truncated',
          Math.min(q, size),
          c.length,
          c.seq,
          inside
            ? `the segment ends inside ${this.chunkName(i)}: ${size - q} of its ${c.length} bytes are left`
            : `the segment ends before ${this.chunkName(i)}`,
        );
        this.state[i] = State.Resolved;
      }
    } else if (q < size) {
      const last = n > 0 ? chunks[n - 1]! : null;
      await this.add(
        'bytes_unattested',
        q,
        size - q,
        last?.seq,
        `${size - q} bytes after the last attested chunk${last ? ` (digest seq ${last.seq} attests ${last.offset + last.length} bytes)` : ''}: no digest covers them`,
      );
    }
    for (const x of this.pending) {
      const c = chunks[x.k]!;
      this.findings.push({
        severity: 'error',
        code: 'chunk_deleted',
        w: this.w,
        offset: x.at,
        length: c.length,
        line: x.line,
        seq: c.seq,
        message: `${this.chunkName(x.k)} is gone: the bytes after it start at offset ${x.at} (line ${x.line})`,
      });
    }
    this.findings.sort((a, b) => (a.offset ?? 0) - (b.offset ?? 0));
    return { size, sha256: await this.wholeFileHash(path), findings: this.findings };
  }

  private chunkName(k: number): string {
    const c = this.chunks[k]!;
    return `the chunk attested at offset ${c.offset} (${c.length} bytes, digest seq ${c.seq})`;
  }

  private next(i: number): number {
    while (i < this.chunks.length && this.state[i] !== State.Unseen) i++;
    return i;
  }

  private inserted(from: number, to: number, before: number): Promise<void> {
    const what = `${to - from} bytes no digest attests, before ${this.chunkName(before)}`;
    return this.add('chunk_inserted', from, to - from, this.chunks[before]!.seq, what);
  }

  private async add(
    code: AuditFindingCode,
    offset: number,
    length: number,
    seq: number | undefined,
    message: string,
  ): Promise<void> {
    const line = await this.lineAt(offset);
    this.findings.push({
      severity: 'error',
      code,
      w: this.w,
      offset,
      length,
      line,
      ...(seq !== undefined ? { seq } : {}),
      message,
    });
  }

  /** SHA-256 (hex) of [pos, pos+len); `inOrder` feeds the whole-file hash and line count when contiguous. */
  private async hashAt(pos: number, len: number, inOrder = false): Promise<string> {
    const h = createHash('sha256');
    const feed = inOrder && pos === this.fed;
    const count = inOrder && pos === this.lp;
    for (let at = pos; at < pos + len; ) {
      const want = Math.min(BLOCK, pos + len - at);
      const { bytesRead } = await this.fh.read(this.buf, 0, want, at);
      if (bytesRead === 0) break;
      const part = this.buf.subarray(0, bytesRead);
      h.update(part);
      if (feed) this.fileHash.update(part);
      if (count) this.ln += countNewlines(part);
      at += bytesRead;
    }
    if (feed) this.fed += len;
    if (count) this.lp += len;
    return h.digest('hex');
  }

  /** The 1-based line at `pos` of the file as it is. */
  private async lineAt(pos: number): Promise<number> {
    if (pos < this.lp) {
      this.lp = 0;
      this.ln = 1;
    }
    while (this.lp < pos) {
      const { bytesRead } = await this.fh.read(this.buf, 0, Math.min(BLOCK, pos - this.lp), this.lp);
      if (bytesRead === 0) break;
      this.ln += countNewlines(this.buf.subarray(0, bytesRead));
      this.lp += bytesRead;
    }
    return this.ln;
  }

  private async byteAt(pos: number): Promise<number> {
    const b = Buffer.alloc(1);
    await this.fh.read(b, 0, 1, pos);
    return b[0]!;
  }

  /** Whether chunk k could start at p: p starts a line and p + length ends one (or the file). */
  private async fits(p: number, k: number): Promise<boolean> {
    const end = p + this.chunks[k]!.length;
    if (end > this.size) return false;
    if (p > 0 && (await this.byteAt(p - 1)) !== NL) return false;
    return end === this.size || (await this.byteAt(end - 1)) === NL;
  }

  /**
   * The nearest attested chunk found at or after `q` (an unseen one of the next NEAR, or one skipped
   * before): first at the offsets a deletion, edit or swap would give, then at each line start of a
   * window. null when none is found.
   */
  private async findAnchor(q: number, j: number): Promise<{ k: number; p: number } | null> {
    const cands: number[] = this.pending.slice(-NEAR).map((x) => x.k);
    for (let i = j; i < this.chunks.length && cands.length < 2 * NEAR; i++) {
      if (this.state[i] === State.Unseen && this.chunks[i]!.sha256 !== '') cands.push(i);
    }
    if (cands.length === 0) return null;
    // where a deletion, a same-length edit or a swap puts a chunk: q plus sums of nearby lengths
    const near = new Map<number, number[]>();
    near.set(q, cands);
    for (const k of cands) near.set(q + this.chunks[k]!.length, cands);
    let sum = q;
    for (let i = j; i < Math.min(this.chunks.length, j + NEAR); i++) {
      sum += this.chunks[i]!.length;
      near.set(sum, cands);
    }
    // where one insertion or deletion before a candidate moved it: aligned from the segment's end; tried
    // after the scan, since a later insertion or deletion moves it too
    const last = this.chunks.at(-1)!;
    const total = last.offset + last.length;
    const aligned = new Map<number, number[]>();
    for (const k of cands) {
      const p = this.size - (total - this.chunks[k]!.offset);
      if (p >= q) aligned.set(p, [...(aligned.get(p) ?? []), k]);
    }
    return (
      (await this.tryAt(q, j, near)) ?? (await this.scanWindow(q, cands)) ?? (await this.tryAt(q, j, aligned))
    );
  }

  /** The first (by offset) of `at`'s offsets where one of its candidates fits and hashes right. */
  private async tryAt(
    q: number,
    j: number,
    at: Map<number, number[]>,
  ): Promise<{ k: number; p: number } | null> {
    for (const p of [...at.keys()].sort((a, b) => a - b)) {
      const fitting: number[] = [];
      for (const k of at.get(p)!) if (!(p === q && k === j) && (await this.fits(p, k))) fitting.push(k);
      const hit = await this.matchAt(p, fitting);
      if (hit !== null) return { k: hit, p };
    }
    return null;
  }

  /** The first of `ks` (shortest first) whose bytes at p hash to its SHA-256, hashing once. */
  private async matchAt(p: number, ks: number[]): Promise<number | null> {
    if (ks.length === 0) return null;
    const sorted = [...ks].sort((a, b) => this.chunks[a]!.length - this.chunks[b]!.length);
    const h = createHash('sha256');
    let at = p;
    for (const k of sorted) {
      const end = p + this.chunks[k]!.length;
      while (at < end) {
        const { bytesRead } = await this.fh.read(this.buf, 0, Math.min(BLOCK, end - at), at);
        if (bytesRead === 0) return null;
        h.update(this.buf.subarray(0, bytesRead));
        at += bytesRead;
      }
      if (h.copy().digest('hex') === this.chunks[k]!.sha256) return k;
    }
    return null;
  }

  /** An insertion: each line start of a bounded window after q, candidates whose length ends a line. */
  private async scanWindow(q: number, cands: number[]): Promise<{ k: number; p: number } | null> {
    const span = cands.reduce((s, k) => s + this.chunks[k]!.length, 0);
    const len = Math.min(this.size - q, WINDOW_MAX, 2 * span + BLOCK);
    if (len <= 0) return null;
    const win = Buffer.allocUnsafe(len);
    const { bytesRead } = await this.fh.read(win, 0, len, q);
    const end = q + bytesRead;
    const byLength = [...cands].sort((a, b) => this.chunks[a]!.length - this.chunks[b]!.length);
    // lines of equal length fit every candidate at every line start: a budget keeps that linear
    let budget = len + 16 * BLOCK;
    for (let p = q; p < end && budget > 0; ) {
      const i = p - q;
      let h: Hash | null = null;
      let hashed = i;
      for (const k of byLength) {
        const stop = i + this.chunks[k]!.length;
        if (q + stop > end) break;
        if (!(q + stop === this.size || win[stop - 1] === NL)) continue;
        h ??= createHash('sha256');
        h.update(win.subarray(hashed, stop));
        budget -= stop - hashed;
        hashed = stop;
        if (h.copy().digest('hex') === this.chunks[k]!.sha256) return { k, p };
      }
      const nl = win.indexOf(NL, i);
      if (nl < 0) break;
      p = q + nl + 1;
    }
    return null;
  }

  private async wholeFileHash(path: string): Promise<string> {
    if (this.fed === this.size) return this.fileHash.digest('hex');
    const h = createHash('sha256');
    for await (const part of createReadStream(path)) h.update(part as Buffer);
    return h.digest('hex');
  }
}

function countNewlines(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(NL); i >= 0; i = b.indexOf(NL, i + 1)) n++;
  return n;
}
