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
 *
 * Cost (issue 15 attack: every line edited made it quadratic): line starts come from a newline bitmap
 * built once (segment-index.ts); the window scan remembers, per chunk length, how far it has hashed and
 * where each attested (length, SHA-256) occurs, so no (offset, length) is hashed twice; and all hashing
 * off the in-order walk draws on one budget (4 × the file size + 64 MiB by default). When it is spent
 * the rest is reported conservatively: chunk_modified per chunk, or one chunk_modified for "the rest of
 * the segment from offset X", never nothing.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { type AttestedChunk, ChunkSearch } from './chunk-search.js';
import type { AuditFinding, AuditFindingCode } from './schemas.js';
import { type LocateStats, SegmentFile } from './segment-index.js';

export type { AttestedChunk } from './chunk-search.js';
export type { LocateStats } from './segment-index.js';

/** How far around a mismatch the walk looks: chunks ahead (and skipped ones behind), window bytes. */
const NEAR = 8;
const BUDGET_PER_BYTE = 4;
const BUDGET_FLOOR = 64 * 1024 * 1024;

/** The segment's size, whole-file SHA-256, and a finding per difference from the attested chunks. */
export interface LocateResult {
  size: number;
  sha256: string;
  findings: AuditFinding[];
}

/** Knobs for tests: `stats` is filled in with the work done; `budget` (bytes) replaces the default. */
export interface LocateOptions {
  stats?: LocateStats;
  /** bytes that may be hashed off the in-order walk; default 4 × file size + 64 MiB */
  budget?: number;
}

/**
 * Checks `path` (writer `w`'s segment) against its attested chunks, in attested order. Work is about
 * linear in the file size plus the number of chunks whatever the file holds (see the module doc).
 * @throws Error when the file cannot be read (the caller reports segment_missing before calling)
 */
export async function locateChunks(
  path: string,
  w: string,
  chunks: AttestedChunk[],
  opts: LocateOptions = {},
): Promise<LocateResult> {
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    const seg = new SegmentFile(fh, size, opts.stats ?? { hashedBytes: 0, reads: 0 });
    const budget = opts.budget ?? BUDGET_PER_BYTE * size + BUDGET_FLOOR;
    return await new Walk(seg, w, chunks, budget).run(path);
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

/** A chunk skipped at a mismatch; a list in the order skipped (unlinked when found later). */
interface Pending {
  k: number;
  at: number;
  line: number;
  by: number;
  prev: Pending | null;
  next: Pending | null;
}

class Walk {
  private readonly state: State[];
  private first: Pending | null = null;
  private last: Pending | null = null;
  private readonly pendingOf = new Map<number, Pending>();
  private readonly findings: AuditFinding[] = [];
  private readonly fileHash = createHash('sha256');
  private fed = 0; // bytes of the file fed to fileHash, in order
  private readonly size: number;
  private readonly search: ChunkSearch;

  constructor(
    private readonly seg: SegmentFile,
    private readonly w: string,
    private readonly chunks: AttestedChunk[],
    budget: number,
  ) {
    this.size = seg.size;
    this.state = chunks.map(() => State.Unseen);
    this.search = new ChunkSearch(seg, chunks, budget);
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
      let same = fits && c.sha256 === '';
      if (fits && !same) {
        // off the in-order walk (after an anchor) hashing draws on the budget
        if (q !== this.fed && !this.search.afford(c.length)) {
          await this.giveUp(q, j);
          q = size;
          break;
        }
        same = (await this.hashAt(q, c.length)) === c.sha256;
      }
      if (same) {
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
        const why = this.search.exhausted
          ? ' (where its bytes went was not searched: the work budget is spent)'
          : '';
        // the last chunk, modified, with bytes after it: one edit that made it longer, or an edit and an
        // append; the hash cannot tell which, so one finding over both rather than an "append" it cannot
        // prove (a clean append leaves the chunk matching at its offset: bytes_unattested below)
        const tail = this.next(j + 1) === n && q + c.length < size;
        const len = tail ? size - q : c.length;
        const grown = tail
          ? `, now ${len} bytes where ${c.length} were attested (it was edited, or edited and bytes were added after it)`
          : '';
        await this.add('chunk_modified', q, len, c.seq, await this.differs(j, q, len, `${grown}${why}`));
        this.state[j] = State.Resolved;
        q += len;
        j = this.next(j + 1);
        continue;
      }
      const { k, p } = anchor;
      if (k < j || this.state[k] === State.Pending) {
        // an earlier chunk skipped as missing is found here: out of order
        const was = this.pendingOf.get(k)!;
        this.unpend(was);
        if (p > q) await this.inserted(q, p, k);
        const by = chunks[was.by]!;
        await this.add(
          'chunks_reordered',
          p,
          chunks[k]!.length,
          chunks[k]!.seq,
          `${this.chunkName(k)} belongs at offset ${was.at} (line ${was.line}), where the chunk attested at offset ${by.offset} (digest seq ${by.seq}) is found; it is found at offset ${p} (${await this.span(p, p + chunks[k]!.length)}), after it: the chunks are out of order`,
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
            len === chunks[i]!.length ? '' : `, now ${len} bytes where ${chunks[i]!.length} were attested`;
          await this.add('chunk_modified', at, len, chunks[i]!.seq, await this.differs(i, at, len, changed));
          this.state[i] = State.Resolved;
          at += len;
        }
      } else {
        const line = await this.lineAt(q);
        for (const i of skipped) {
          this.state[i] = State.Pending;
          const x: Pending = { k: i, at: q, line, by: k, prev: this.last, next: null };
          if (this.last) this.last.next = x;
          else this.first = x;
          this.last = x;
          this.pendingOf.set(i, x);
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
        // fewer bytes than attested: a cut and a deletion inside the chunk hash the same (wrong), so both
        // are said; the line range is what is left of it in the file
        await this.add(
          'chunk_truncated',
          Math.min(q, size),
          c.length,
          c.seq,
          inside
            ? `the segment ends inside ${this.chunkName(i)}, at ${await this.span(q, size)} of the file: ${size - q} of its ${c.length} bytes are left; bytes were removed from it or it was cut off`
            : `the segment ends before ${this.chunkName(i)}`,
          inside ? size : null,
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
        `${size - q} bytes (${await this.span(q, size)}) after the last attested chunk${last ? ` (digest seq ${last.seq} attests ${last.offset + last.length} bytes)` : ''}: no digest covers them`,
      );
    }
    for (let x = this.first; x; x = x.next) {
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

  /** The budget ran out with chunks j.. unchecked: one finding for the rest of the segment from q. */
  private async giveUp(q: number, j: number): Promise<void> {
    const left = this.chunks.length - j;
    await this.add(
      'chunk_modified',
      q,
      this.size - q,
      this.chunks[j]!.seq,
      `the segment differs from offset ${q} to its end (${this.size - q} bytes, ${await this.span(q, this.size)}): the ${left} attested chunks from ${this.chunkName(j)} on were not located there (the work budget for a tampered segment is spent)`,
    );
    for (let i = j; i < this.chunks.length; i++)
      if (this.state[i] === State.Unseen) this.state[i] = State.Resolved;
  }

  private chunkName(k: number): string {
    const c = this.chunks[k]!;
    return `the chunk attested at offset ${c.offset} (${c.length} bytes, digest seq ${c.seq})`;
  }

  private next(i: number): number {
    while (i < this.chunks.length && this.state[i] !== State.Unseen) i++;
    return i;
  }

  private unpend(x: Pending): void {
    if (x.prev) x.prev.next = x.next;
    else this.first = x.next;
    if (x.next) x.next.prev = x.prev;
    else this.last = x.prev;
    this.pendingOf.delete(x.k);
  }

  private async inserted(from: number, to: number, before: number): Promise<void> {
    const what = `${to - from} bytes no digest attests (${await this.span(from, to)}), before ${this.chunkName(before)}`;
    return this.add('chunk_inserted', from, to - from, this.chunks[before]!.seq, what);
  }

  /**
   * "one of lines a–b (bytes x–y) differs from <chunk>": a digest hashes a chunk whole, so which of its
   * lines changed is not known and none is named; the range is [at, at+len) of the file as it is.
   */
  private async differs(k: number, at: number, len: number, more: string): Promise<string> {
    const [a, b] = [await this.lineAt(at), await this.lineAt(at + len - 1)];
    const which = a === b ? `line ${a}` : `one of lines ${a}–${b}`;
    return `${which} (bytes ${at}–${at + len - 1}) differs from ${this.chunkName(k)}${more}: its SHA-256 does not match, and a digest attests a chunk whole, not which line changed`;
  }

  /** "lines a–b, bytes x–y" (or "line a, …") of the file for [from, to), to > from. */
  private async span(from: number, to: number): Promise<string> {
    const [a, b] = [await this.lineAt(from), await this.lineAt(to - 1)];
    return `${a === b ? `line ${a}` : `lines ${a}–${b}`}, bytes ${from}–${to - 1}`;
  }

  /**
   * One finding at [offset, offset+length); `end` is where what it names ends in the file (default
   * offset+length; null: nothing of it is in the file), whose last line becomes `line_end`.
   */
  private async add(
    code: AuditFindingCode,
    offset: number,
    length: number,
    seq: number | undefined,
    message: string,
    end: number | null = offset + length,
  ): Promise<void> {
    const line = await this.lineAt(offset);
    const lineEnd = end !== null && end > offset ? await this.lineAt(end - 1) : undefined;
    this.findings.push({
      severity: 'error',
      code,
      w: this.w,
      offset,
      length,
      line,
      ...(lineEnd !== undefined ? { line_end: lineEnd } : {}),
      ...(seq !== undefined ? { seq } : {}),
      message,
    });
  }

  /** SHA-256 (hex) of [pos, pos+len); fed to the whole-file hash too when it continues it. */
  private async hashAt(pos: number, len: number): Promise<string> {
    const h = createHash('sha256');
    const feed = pos === this.fed;
    await this.seg.feed(feed ? [h, this.fileHash] : [h], pos, len);
    if (feed) this.fed += len;
    return h.digest('hex');
  }

  /** The 1-based line at `pos` of the file as it is. */
  private async lineAt(pos: number): Promise<number> {
    await this.seg.index();
    return this.seg.lineAt(pos);
  }

  /**
   * The nearest attested chunk found at or after `q` (an unseen one of the next NEAR, or one skipped
   * before): first at the offsets a deletion, edit or swap would give, then at each line start of a
   * window. null when none is found, or the budget is spent.
   */
  private async findAnchor(q: number, j: number): Promise<{ k: number; p: number } | null> {
    if (this.search.exhausted) return null;
    await this.seg.index();
    const cands: number[] = [];
    for (let x = this.last; x && cands.length < NEAR; x = x.prev) cands.unshift(x.k);
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
      (await this.tryAt(q, j, near)) ??
      (await this.search.scanWindow(q, cands)) ??
      (await this.tryAt(q, j, aligned))
    );
  }

  /** The first (by offset) of `at`'s offsets where one of its candidates fits and hashes right. */
  private async tryAt(
    q: number,
    j: number,
    at: Map<number, number[]>,
  ): Promise<{ k: number; p: number } | null> {
    for (const p of [...at.keys()].sort((a, b) => a - b)) {
      const fitting = at
        .get(p)!
        .filter((k) => !(p === q && k === j) && this.seg.fits(p, this.chunks[k]!.length));
      const hit = await this.search.matchAt(p, fitting);
      if (hit !== null) return { k: hit, p };
      if (this.search.exhausted) return null;
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
