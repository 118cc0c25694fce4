/**
 * The text replay's output (issue 16): lines written straight into large buffers as UTF-8, instead of
 * strings joined into chunks and encoded again (the encoding of ~1 MiB two-byte strings, flattened from
 * thousands of pieces, was 17% of a text replay). A finished buffer holds whole lines only.
 */

/** Lines as UTF-8 in buffers of `cap` bytes (a longer line gets a buffer of its own size). */
export class TextOut {
  private buf: Buffer;
  private used = 0;
  /** where the line being written starts: a buffer is finished at a line's start only */
  private lineStart = 0;
  private readonly done: Buffer[] = [];

  constructor(private readonly cap: number) {
    this.buf = Buffer.allocUnsafe(cap);
  }

  /** Appends `s` as UTF-8. */
  str(s: string): void {
    // At most 3 bytes per UTF-16 unit: checked before writing, so `write` never cuts the text.
    const most = s.length * 3;
    if (this.used + most > this.buf.length) this.room(most);
    this.used += this.buf.write(s, this.used, 'utf8');
  }

  /** Appends `line`, which ends with its `\n`, as the end of the current line. */
  strLine(line: string): void {
    this.str(line);
    this.lineStart = this.used;
  }

  /** Appends bytes as they are (UTF-8 the caller encoded, e.g. a kept attribution mark). */
  bytes(b: Uint8Array): void {
    if (this.used + b.length > this.buf.length) this.room(b.length);
    this.buf.set(b, this.used);
    this.used += b.length;
  }

  /** Ends the current line with `\n`. */
  endLine(): void {
    if (this.used + 1 > this.buf.length) this.room(1);
    this.buf[this.used++] = 0x0a;
    this.lineStart = this.used;
  }

  /** The buffers finished since the last call (each the caller's to keep), oldest first. */
  take(): Buffer[] {
    return this.done.length === 0 ? NONE : this.done.splice(0);
  }

  /** Ends output: the whole lines not yet taken, or null. A line not ended is dropped. */
  finish(): Buffer | null {
    const b = this.lineStart > 0 ? this.buf.subarray(0, this.lineStart) : null;
    this.buf = Buffer.alloc(0);
    this.used = this.lineStart = 0;
    return b;
  }

  /** Finishes the buffer before the current line and moves that line to a new one with `need` more bytes. */
  private room(need: number): void {
    const partial = this.used - this.lineStart;
    const next = Buffer.allocUnsafe(Math.max(this.cap, partial + need));
    this.buf.copy(next, 0, this.lineStart, this.used);
    if (this.lineStart > 0) this.done.push(this.buf.subarray(0, this.lineStart));
    this.buf = next;
    this.used = partial;
    this.lineStart = 0;
  }
}

const NONE: Buffer[] = [];
