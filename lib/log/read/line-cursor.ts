/**
 * One writer's lines for the replay's fast merge (issue 16): a cursor over a segment's blocks that finds
 * complete lines with `indexOf(0x0a)`, reads each line's envelope with `scanLine` (no parsed object, no
 * string) and keeps the line as bytes where it lies, so the merge can copy it out as it was written.
 *
 * The rules are the reader's and the merge's (lib/log/read/reader.ts, lib/log/read/merge.ts), so the fast replay
 * gives the same lines in the same order: an event's merge key is its writer's running maximum ts (a ts
 * that is not a timestamp takes the running maximum; a quarantined line takes it without changing it);
 * a last line with no newline is never a line of the replay (only `onProblem` hears of it); a line is an
 * event exactly when `parseLine` says so (the contract of `scanLine`), and a problem is reported with the
 * `LineProblem` `parseLine` gives for that line.
 *
 * Memory: the current block (the reader's: valid until its next `next()`, so nothing of it is kept after)
 * and one carry buffer per writer for a line cut by a block's end, which grows to the longest such line.
 */
import { isUtf8 } from 'node:buffer';
import { type LineProblem, parseLine } from '../format/codec.js';
import { hashIdBytes, hashIdText, type LineScan, scanLine } from '../format/envelope-scan.js';
import { setWords, type WordView, wordViewOf } from '../format/json-scan.js';

/** One segment's bytes as blocks, in order (the shape of lib/log/read/segment-blocks.ts's reader). */
export interface BlockReader {
  /** the segment's writer id */
  readonly w: string;
  /** the next block (the caller's until the next call), or null after the last byte */
  next(): Promise<Uint8Array | null>;
  /** releases what the reader holds; `next()` gives null afterwards */
  close(): Promise<void>;
}

/** The readers of a session's segments, in the merge's order, and how to close them all. */
export interface BlockSet {
  readers: readonly BlockReader[];
  /** closes every reader; once it resolves nothing of them is open */
  closeAll(): Promise<void>;
}

export interface CursorOptions {
  /** quarantined complete lines are lines of the cursor too (the raw replay); otherwise skipped */
  keepProblems: boolean;
  /**
   * keep each event's id as `idHash` and `idText()` (the replay with corrections): the hash is read from
   * the bytes, the string made only when asked
   */
  wantId: boolean;
  /** hears of every line that is not an event, the last one with no newline included (as merge.ts) */
  onProblem?: ((w: string, problem: LineProblem) => void) | undefined;
}

const NL = 0x0a;
const EMPTY = Buffer.alloc(0);

function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * A writer's position in the merge. After `step()` or `advance()` gave true, the current line is
 * `lb[ls, le)` (no newline), `problem` says whether it is a quarantined one, `key` is its merge key and
 * `isCorrection`/`id` come from its scan. The line's bytes stay valid until the next `step`/`advance`.
 */
export class LineCursor {
  key = Number.NEGATIVE_INFINITY;
  /** the current line's buffer and bounds */
  lb: Buffer = EMPTY;
  ls = 0;
  le = 0;
  problem = false;
  isCorrection = false;
  /** `hashIdBytes` of the current event's id (only with `wantId`; 0 for a quarantined line) */
  idHash = 0;
  /** the id's text in `lb` (`idAt` -1: it is in `idString`, for an id with an escape or a fallback line) */
  private idAt = -1;
  private idEnd = -1;
  private idString: string | undefined = undefined;
  /** 1-based line number and byte offset of the current line */
  lineNo = 0;
  lineOffset = 0;

  private maxTs = Number.NEGATIVE_INFINITY;
  private block: Buffer = EMPTY;
  private pos = 0;
  /** end of the block's complete lines (one past its last newline) */
  private limit = 0;
  private utf8 = true;
  /** the start of a line cut by the previous block's end, copied here once */
  private carry: Buffer = EMPTY;
  private carryLen = 0;
  /** the carry holds a complete line (its newline came in the current block), to be taken first */
  private carried = false;
  private nextLine = 1;
  private nextOffset = 0;
  private done = false;
  /** the word views of the block and of the carry, made once per buffer (lib/log/format/json-scan.ts) */
  private blockWords: WordView | null = null;
  private carryWords: WordView | null = null;

  readonly w: string;

  constructor(
    readonly index: number,
    private readonly reader: BlockReader,
    private readonly scan: LineScan,
    private readonly options: CursorOptions,
  ) {
    this.w = reader.w;
  }

  /** Moves to the next line of the current block, without awaiting; false when the block is used up. */
  step(): boolean {
    if (this.carried) {
      this.carried = false;
      const len = this.carryLen;
      this.carryLen = 0;
      if (this.take(this.carry, 0, len, false)) return true;
    }
    const block = this.block;
    const limit = this.limit;
    while (this.pos < limit) {
      const s = this.pos;
      const nl = block.indexOf(NL, s);
      this.pos = nl + 1;
      if (this.take(block, s, nl, this.utf8)) return true;
    }
    return false;
  }

  /** Moves to the next line, reading blocks as needed; false when the segment has no more lines. */
  async advance(): Promise<boolean> {
    for (;;) {
      if (this.step()) return true;
      if (this.done) return false;
      // Every line of the block has been taken: keep its cut tail before the reader may reuse the block.
      if (this.limit < this.block.length) this.append(this.block, this.limit, this.block.length);
      this.block = EMPTY;
      this.pos = this.limit = 0;
      const next = await this.reader.next();
      if (next === null) {
        this.done = true;
        if (this.carryLen > 0) {
          const bytes = Buffer.from(this.carry.subarray(0, this.carryLen));
          this.carryLen = 0;
          const p = parseLine(bytes, this.nextLine, this.nextOffset, false);
          if (!p.ok) this.options.onProblem?.(this.w, p.problem);
        }
        return false;
      }
      this.load(asBuffer(next));
    }
  }

  private load(b: Buffer): void {
    let from = 0;
    if (this.carryLen > 0) {
      const nl = b.indexOf(NL);
      if (nl === -1) {
        this.append(b, 0, b.length);
        return;
      }
      this.append(b, 0, nl);
      this.carried = true;
      from = nl + 1;
    }
    const lastNl = b.lastIndexOf(NL);
    this.block = b;
    this.pos = from;
    this.limit = lastNl >= from ? lastNl + 1 : from;
    // One check for the block's complete lines; only a block that fails is checked line by line.
    this.utf8 = this.limit > from ? isUtf8(b.subarray(from, this.limit)) : true;
  }

  /** Copies `b[s, e)` after the carried bytes. */
  private append(b: Buffer, s: number, e: number): void {
    const need = this.carryLen + (e - s);
    if (need > this.carry.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, this.carry.length * 2, 4096));
      this.carry.copy(grown, 0, 0, this.carryLen);
      this.carry = grown;
    }
    b.copy(this.carry, this.carryLen, s, e);
    this.carryLen = need;
  }

  /**
   * The current event's id (with `wantId`; undefined for a quarantined line): decoded from the line's
   * bytes on the first call, so only the events the caller asks about cost a string.
   */
  idText(): string | undefined {
    if (this.idString === undefined && this.idAt >= 0)
      this.idString = this.lb.toString('utf8', this.idAt, this.idEnd);
    return this.idString;
  }

  /** Keeps where the id of the scanned event `b[s, e)` is and its hash (`this.scan` holds its scan). */
  private keepId(b: Buffer, s: number, e: number, utf8Checked: boolean): void {
    const scan = this.scan;
    this.idString = undefined;
    if (scan.idAt >= 0) {
      this.idAt = scan.idAt;
      this.idEnd = scan.idEnd;
      this.idHash = hashIdBytes(b, scan.idAt, scan.idEnd);
      return;
    }
    // An id with an escape, or a line the scan left to the full parse: the scan gives the id's text.
    scanLine(b, s, e, scan, true, utf8Checked);
    this.idAt = -1;
    this.idString = scan.id;
    this.idHash = scan.id === undefined ? 0 : hashIdText(scan.id);
  }

  /** Makes `b[s, e)` the current line if it is one of the cursor's; false when it is skipped. */
  private take(b: Buffer, s: number, e: number, utf8Checked: boolean): boolean {
    this.lineNo = this.nextLine++;
    this.lineOffset = this.nextOffset;
    this.nextOffset += e - s + 1;
    const scan = this.scan;
    // Another writer's line was scanned last: hand the scan this buffer's word view, not a new one.
    if (b === this.block) {
      if (this.blockWords?.buf !== b) this.blockWords = wordViewOf(b);
      setWords(this.blockWords);
    } else if (b === this.carry) {
      if (this.carryWords?.buf !== b) this.carryWords = wordViewOf(b);
      setWords(this.carryWords);
    }
    if (scanLine(b, s, e, scan, false, utf8Checked)) {
      const ts = scan.tsMicros;
      if (ts > this.maxTs) this.maxTs = ts;
      this.key = this.maxTs;
      this.problem = false;
      this.isCorrection = scan.isCorrection;
      if (this.options.wantId) this.keepId(b, s, e, utf8Checked);
      this.lb = b;
      this.ls = s;
      this.le = e;
      return true;
    }
    const onProblem = this.options.onProblem;
    if (onProblem) {
      // Built by the merge's parser, on a copy: the block is the reader's and the consumer may keep it.
      const p = parseLine(Buffer.from(b.subarray(s, e)), this.lineNo, this.lineOffset, true);
      if (!p.ok) onProblem(this.w, p.problem);
    }
    if (!this.options.keepProblems) return false;
    this.key = this.maxTs;
    this.problem = true;
    this.isCorrection = false;
    this.idHash = 0;
    this.idAt = -1;
    this.idString = undefined;
    this.lb = b;
    this.ls = s;
    this.le = e;
    return true;
  }
}
