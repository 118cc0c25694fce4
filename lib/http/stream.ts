/**
 * Streams an async iterable of text or bytes as a response body, in batches of about 64 KiB so a replay
 * of a million lines is not a million writes.
 *
 * Pull-based with nothing read ahead (high-water mark 0): the source is asked for its next batch only when
 * the server is ready to send more, i.e. when the client's socket drains. A slow reader therefore holds one
 * batch of the body in this process, not the rest of the session (docs/operations.md, issue 8).
 */
const encoder = new TextEncoder();
const BATCH = 64 * 1024;

export interface ByteStreamOptions {
  /**
   * Called once when the body is over, however it ends: its last byte taken, the source failing, or the
   * reader cancelling (a client that went away). What the response held (a replay slot) is released there.
   */
  onClose?: () => void;
}

/**
 * The body stream of `source`. Cancelling it (the server does when the client disconnects) closes the
 * source (`return()`), which closes whatever the source opened (segment files, S3 requests).
 */
export function toByteStream(
  source: AsyncIterable<string | Uint8Array>,
  options: ByteStreamOptions = {},
): ReadableStream<Uint8Array> {
  const it = source[Symbol.asyncIterator]();
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    options.onClose?.();
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
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
        }
      },
      async cancel() {
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
