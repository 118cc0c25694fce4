/**
 * Streams an async iterable of text or bytes as a response body, in batches of about 64 KiB so a replay
 * of a million lines is not a million writes.
 */
const encoder = new TextEncoder();
const BATCH = 64 * 1024;

export function toByteStream(source: AsyncIterable<string | Uint8Array>): ReadableStream<Uint8Array> {
  const it = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const parts: Uint8Array[] = [];
      let size = 0;
      while (size < BATCH) {
        const next = await it.next();
        if (next.done) break;
        const bytes = typeof next.value === 'string' ? encoder.encode(next.value) : next.value;
        parts.push(bytes);
        size += bytes.length;
      }
      if (parts.length > 0) controller.enqueue(parts.length === 1 ? parts[0]! : Buffer.concat(parts, size));
      if (size < BATCH) controller.close();
    },
    async cancel() {
      await it.return?.();
    },
  });
}
