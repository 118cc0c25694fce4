/**
 * Random access to one segment file for lib/audit/locate-chunks.ts (issue 15): block reads through a
 * small cache (never 1-byte reads), a newline bitmap built in one pass (is p a line start, where is the
 * next one, which line is p on: all O(1) or amortised), and a count of the work done, so a test can bound
 * it without timing it.
 */
import type { Hash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';

/** Work counters a caller may pass in and read after: bytes fed to SHA-256 and `read` calls made. */
export interface LocateStats {
  hashedBytes: number;
  reads: number;
}

const BLOCK = 1024 * 1024;
/** the least a cache miss reads: a probe near the last one is served from memory */
const MIN_LOAD = 64 * 1024;
const NL = 0x0a;

export class SegmentFile {
  /** two cached blocks, least recently loaded replaced: the walk at q and the scan ahead of it each keep one */
  private readonly slots = [0, 1].map(() => ({ buf: Buffer.allocUnsafe(BLOCK), at: 0, len: 0, used: 0 }));
  private tick = 0;
  private nl: Uint32Array | null = null;
  private rank: Uint32Array | null = null;
  private lastFrom = -1;
  private lastNext = -1;

  constructor(
    private readonly fh: FileHandle,
    readonly size: number,
    readonly stats: LocateStats,
  ) {}

  /** Feeds [pos, pos+len) to each of `hashes`, in blocks; false when the file ends first. */
  async feed(hashes: Hash[], pos: number, len: number): Promise<boolean> {
    const end = pos + len;
    for (let at = pos; at < end; ) {
      const slot = this.slots.find((s) => at >= s.at && at < s.at + s.len) ?? (await this.load(at, end - at));
      if (slot === null) return false;
      slot.used = ++this.tick;
      const from = at - slot.at;
      const part = slot.buf.subarray(from, Math.min(slot.len, from + end - at));
      for (const h of hashes) h.update(part);
      this.stats.hashedBytes += part.length;
      at += part.length;
    }
    return true;
  }

  private async load(at: number, want: number) {
    const len = Math.min(BLOCK, Math.max(MIN_LOAD, want), this.size - at);
    if (len <= 0) return null;
    const slot = this.slots[0]!.used <= this.slots[1]!.used ? this.slots[0]! : this.slots[1]!;
    const { bytesRead } = await this.fh.read(slot.buf, 0, len, at);
    this.stats.reads++;
    slot.at = at;
    slot.len = bytesRead;
    return bytesRead > 0 ? slot : null;
  }

  /** Builds the newline bitmap (one pass over the file, size/8 bytes of memory); idempotent. */
  async index(): Promise<void> {
    if (this.nl) return;
    const words = new Uint32Array(Math.ceil(this.size / 32) + 1);
    const buf = Buffer.allocUnsafe(BLOCK);
    for (let at = 0; at < this.size; ) {
      const { bytesRead } = await this.fh.read(buf, 0, Math.min(BLOCK, this.size - at), at);
      this.stats.reads++;
      if (bytesRead === 0) break;
      const part = buf.subarray(0, bytesRead);
      for (let i = part.indexOf(NL); i >= 0; i = part.indexOf(NL, i + 1)) {
        const b = at + i;
        words[b >>> 5]! |= 1 << (b & 31);
      }
      at += bytesRead;
    }
    // newlines before each 2 KiB boundary (64 words), so lineAt counts at most 64 words
    const rank = new Uint32Array(Math.ceil(words.length / 64) + 1);
    let total = 0;
    for (let w = 0; w < words.length; w++) {
      if ((w & 63) === 0) rank[w >>> 6] = total;
      total += popcount(words[w]!);
    }
    this.nl = words;
    this.rank = rank;
  }

  /** Whether byte `i` is a newline (index() first). */
  isNewline(i: number): boolean {
    return i >= 0 && i < this.size && ((this.nl![i >>> 5]! >>> (i & 31)) & 1) === 1;
  }

  /** Whether a chunk of `len` bytes may start at p: p starts a line and p+len ends one (or the file). */
  fits(p: number, len: number): boolean {
    const end = p + len;
    if (end > this.size) return false;
    if (p > 0 && !this.isNewline(p - 1)) return false;
    return end === this.size || this.isNewline(end - 1);
  }

  /** The first line start after p, or `size` when there is none. */
  nextLineStart(p: number): number {
    // a scan asks for increasing p: a long line is walked once, not once per question
    if (p >= this.lastFrom && p < this.lastNext) return this.lastNext;
    if (p >= this.size) return this.size;
    const words = this.nl!;
    let w = p >>> 5;
    let word = words[w]! & (~0 << (p & 31));
    while (word === 0) {
      if (++w >= words.length) return this.remember(p, this.size);
      word = words[w]!;
    }
    const bit = 31 - Math.clz32(word & -word);
    return this.remember(p, Math.min(this.size, w * 32 + bit + 1));
  }

  private remember(p: number, next: number): number {
    this.lastFrom = p;
    this.lastNext = next;
    return next;
  }

  /** The 1-based line that byte `pos` is on (index() first). */
  lineAt(pos: number): number {
    const words = this.nl!;
    const last = Math.min(pos, this.size) - 1; // count newlines in [0, last]
    if (last < 0) return 1;
    const w = last >>> 5;
    let n = this.rank![w >>> 6]!;
    for (let i = w & ~63; i < w; i++) n += popcount(words[i]!);
    const keep = (last & 31) === 31 ? words[w]! : words[w]! & ((1 << ((last & 31) + 1)) - 1);
    return 1 + n + popcount(keep);
  }
}

function popcount(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}
