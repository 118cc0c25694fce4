/**
 * Streams an async iterable of text or bytes as a response body, in batches of about 64 KiB so a replay
 * of a million lines is not a million writes.
 *
 * Pull-based with nothing read ahead (high-water mark 0): the source is asked for its next batch only when
 * the server is ready to send more, i.e. when the client's socket drains. A slow reader therefore holds one
 * batch of the body in this process, not the rest of the session (docs/operations.md, issue 8). A reader
 * that takes nothing at all for `idleMs` is given up on: no pull for that long means the client stopped
 * reading while keeping its connection open, and the body would otherwise hold its source (open segment
 * files, a replay slot) for as long as the client likes.
 */
const encoder = new TextEncoder();
const BATCH = 64 * 1024;

/** A streamed body was aborted because its reader took none of it for `idleMs` ms. */
export class StreamIdleError extends Error {
  override name = 'StreamIdleError';
  constructor(readonly idleMs: number) {
    super(`the client took no bytes of the answer for ${idleMs / 1000} s; the answer was aborted`);
  }
}

export interface ByteStreamOptions {
  /**
   * Called once when the body is over, however it ends: its last byte taken, the source failing, the
   * reader cancelling (a client that went away), or the reader stalling past `idleMs`. What the response
   * held (a replay slot) is released there.
   */
  onClose?: () => void;
  /**
   * ms the reader may go without asking for the next batch once one is ready; past it the source is
   * closed (`return()`), `onClose` runs and the body fails with a `StreamIdleError` (unless `onIdle` closed
   * the connection). Unset or 0: no limit. Time the source itself takes to produce a batch never counts.
   */
  idleMs?: number | undefined;
  /**
   * Called when the reader stalled past `idleMs`, before the source is closed. Returns true when it closed
   * the connection itself (node-server, which waits for the socket's `drain` and would never see the body
   * fail; it cancels the body instead): the body is then not failed as well, which node-server would
   * print as an unhandled error. Otherwise the body fails and the runtime ends the answer.
   */
  onIdle?: (err: StreamIdleError) => boolean;
}

/**
 * The body stream of `source`. Cancelling it (the server does when the client disconnects) closes the
 * source (`return()`), which closes whatever the source opened (segment files, S3 requests); so does a
 * reader stalled past `options.idleMs`.
 */
export function toByteStream(
  source: AsyncIterable<string | Uint8Array>,
  options: ByteStreamOptions = {},
): ReadableStream<Uint8Array> {
  const it = source[Symbol.asyncIterator]();
  const idleMs = options.idleMs ?? 0;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    options.onClose?.();
  };
  let watch: ReturnType<typeof setTimeout> | undefined;
  const unwatch = () => {
    clearTimeout(watch);
    watch = undefined;
  };
  let gaveUp: StreamIdleError | null = null;
  const stalled = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    watch = undefined;
    gaveUp = new StreamIdleError(idleMs);
    if (options.onIdle?.(gaveUp) !== true) controller.error(gaveUp);
    // The source is suspended at a batch boundary, so return() runs its cleanup now.
    void Promise.resolve()
      .then(() => it.return?.())
      .catch(() => {})
      .finally(close);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        unwatch();
        // Never end a body given up on as if it were complete: its source is closed.
        if (gaveUp) throw gaveUp;
        const parts: Uint8Array[] = [];
        let size = 0;
        try {
          while (size < BATCH) {
            const next = await it.next();
            if (next.done) break;
            const bytes = typeof next.value === 'string' ? encoder.encode(next.value) : next.value;
            parts.push(bytes);
            size += bytes.length;
          }
        } catch (err) {
          close();
          throw err;
        }
        if (parts.length > 0) controller.enqueue(parts.length === 1 ? parts[0]! : Buffer.concat(parts, size));
        if (size < BATCH) {
          controller.close();
          close();
        } else if (idleMs > 0) {
          // The next pull is the reader asking for more; until then the clock runs. unref: a stalled
          // reader alone does not keep a process alive.
          watch = setTimeout(() => stalled(controller), idleMs);
          watch.unref?.();
        }
      },
      async cancel() {
        unwatch();
        try {
          await it.return?.();
        } finally {
          close();
        }
      },
    },
    { highWaterMark: 0 },
  );
}
