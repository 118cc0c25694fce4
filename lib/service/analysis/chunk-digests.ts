/**
 * The server's verify checks each stored chunk against the SHA-256 it acknowledged (issue 8): ingest
 * keeps every accepted chunk's digest (`ChunkRecord`, `StateStore.getChunk`), so bytes that changed on
 * disk while keeping the file's length (a crash that zero-filled part of a file, a bit flip, a hand edit)
 * are found, not only bytes that are gone. The digests are taken as the bytes pass through the read
 * verify makes anyway (its corrections pass), so the check costs the hashing, not another read.
 */
import { createHash, type Hash } from 'node:crypto';
import type { Problem } from '../../log/analyse/verify.js';
import { VERIFY_CODES } from '../../log/analyse/verify.js';
import type { ReplaySegment } from '../../log/replay/replay.js';
import type { ChunkRecord } from '../../store/index.js';
import type { ServiceContext } from '../shared/context.js';

/** One writer's check: its chunks walked from offset 0 by their lengths, up to `end`. */
class WriterDigests {
  /** bytes of the segment hashed so far */
  private at = 0;
  /** the chunk being hashed; null once past `end`, or when the index has no record at `at` */
  private chunk: ChunkRecord | null = null;
  private hash: Hash | null = null;
  readonly problems: Problem[] = [];

  constructor(
    private readonly ctx: ServiceContext,
    private readonly sid: string,
    readonly w: string,
    /** where the read stops: the indexed length, or where a loss begins */
    readonly end: number,
  ) {}

  /** Whether every byte up to `end` went through `through`. */
  get done(): boolean {
    return this.at >= this.end;
  }

  /** Starts over (a second read, when the first did not reach `end`). */
  reset(): void {
    this.at = 0;
    this.chunk = null;
    this.hash = null;
    this.problems.length = 0;
  }

  /** `bytes` unchanged, each piece hashed into the chunk it belongs to before it is passed on. */
  async *through(bytes: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    if (this.at === 0 && this.end > 0) await this.next();
    for await (const piece of bytes) {
      await this.take(piece);
      yield piece;
    }
  }

  private async take(piece: Uint8Array): Promise<void> {
    let p = 0;
    while (p < piece.length && this.chunk && this.hash) {
      const chunkEnd = this.chunk.offset + this.chunk.length;
      const n = Math.min(piece.length - p, chunkEnd - this.at);
      this.hash.update(piece.subarray(p, p + n));
      p += n;
      this.at += n;
      if (this.at === chunkEnd) {
        this.compare(this.chunk, this.hash.digest('hex'));
        await this.next();
      }
    }
    // Past the last chunk the index records (or the last whole one before `end`): counted, not hashed.
    this.at += piece.length - p;
  }

  /** The record of the chunk starting at `at`, unless it reaches past `end` (a loss cut it: not checkable). */
  private async next(): Promise<void> {
    this.chunk = null;
    this.hash = null;
    if (this.at >= this.end) return;
    const rec = await this.ctx.state.getChunk(this.ctx.tenant, this.sid, this.w, this.at);
    // No record here: an index that does not tile the segment; nothing to compare the rest with.
    if (!rec || rec.length <= 0 || rec.offset + rec.length > this.end) return;
    this.chunk = rec;
    this.hash = createHash('sha256');
  }

  private compare(chunk: ChunkRecord, digest: string): void {
    if (digest === chunk.sha256) return;
    const range = { start: chunk.offset, end: chunk.offset + chunk.length };
    this.problems.push({
      severity: VERIFY_CODES.chunk_digest_mismatch,
      code: 'chunk_digest_mismatch',
      w: this.w,
      seq: null,
      line: null,
      message: `bytes [${range.start}, ${range.end}) of ${this.w}'s segment changed on disk: their SHA-256 differs from the one the server acknowledged; restore them from a backup (the server's operator: docs/operations.md)`,
      range,
    });
  }
}

/**
 * Wraps a stored session's segments so that the first read of each hashes its chunks against the index.
 * Read them all once (verify's corrections pass does), then `problems()` gives one
 * `chunk_digest_mismatch` per chunk whose bytes differ from what was acknowledged.
 * @param ends each writer's readable length (`ends.get(w)`): its indexed length, or where its loss begins
 */
export function digestChecked(
  ctx: ServiceContext,
  sid: string,
  segments: readonly ReplaySegment[],
  ends: ReadonlyMap<string, number>,
): { segments: ReplaySegment[]; problems: (signal?: AbortSignal) => Promise<Problem[]> } {
  const checks = segments.map((seg) => new WriterDigests(ctx, sid, seg.w, ends.get(seg.w) ?? 0));
  const wrapped = segments.map((seg, i): ReplaySegment => {
    let first = true;
    return {
      w: seg.w,
      open: (chunkBytes, signal) => {
        const bytes = seg.open(chunkBytes, signal);
        if (!first) return bytes;
        first = false;
        return checks[i]!.through(bytes);
      },
    };
  });
  return {
    segments: wrapped,
    async problems(signal) {
      for (const [i, check] of checks.entries()) {
        if (check.done) continue;
        // The first read stopped short of the end (a pass that did not need every byte): read it whole.
        check.reset();
        for await (const _ of check.through(segments[i]!.open(undefined, signal))) {
          // the bytes are only hashed
        }
      }
      return checks.flatMap((c) => c.problems);
    },
  };
}
