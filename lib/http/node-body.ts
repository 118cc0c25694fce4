/**
 * A request body read straight from Node's `IncomingMessage` (issue 16.3), for the routes that take raw
 * bytes (`boundedBody` in ./params.ts) when the app runs on `@hono/node-server`: its `c.env.incoming`.
 * Reading it through the web `Request` (`req.raw.body`) wraps the socket's pieces in web streams and
 * copies each of them again; here they are copied once into one buffer, of the declared
 * `Content-Length` when there is one.
 */
import type { IncomingMessage } from 'node:http';

/** What `readIncoming` read: at most `limit + 1` bytes, and whether the body went on past `limit`. */
export interface IncomingBody {
  /** the body's first bytes, in a buffer of its own (never Node's shared pool) */
  bytes: Buffer;
  /** more than `limit` bytes were sent: `bytes` holds `limit + 1` of them, the rest is left unread */
  cut: boolean;
}

/** The `IncomingMessage` of a request served by `@hono/node-server` (its bindings), else null. */
export function incomingOf(env: unknown): IncomingMessage | null {
  const incoming = (env as { incoming?: unknown } | undefined)?.incoming;
  if (!incoming || typeof incoming !== 'object') return null;
  const m = incoming as IncomingMessage;
  // An HTTP/1 request whose body nobody has touched yet (node-server may read it for another reader).
  return typeof m.on === 'function' && typeof m.headers === 'object' && !m.readableDidRead ? m : null;
}

/**
 * Reads the body of `incoming` until its end or until more than `limit` bytes came (the rest is left in
 * the socket, paused: the caller answers with `Connection: close`).
 * @throws Error when the client closes the connection or the stream fails before the body ends
 */
export function readIncoming(incoming: IncomingMessage, limit: number): Promise<IncomingBody> {
  const declared = Number(incoming.headers['content-length']);
  // Node's parser never hands over more than Content-Length bytes; a body declared longer than the
  // limit is still read up to limit + 1 (the verb refuses it and may name its first line).
  const room = Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, limit + 1) : -1;
  return new Promise<IncomingBody>((resolve, reject) => {
    let buf: Buffer | null = room >= 0 ? Buffer.allocUnsafeSlow(room) : null;
    const parts: Buffer[] = [];
    let size = 0;
    const done = (err: Error | null) => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
      if (err) return reject(err);
      const cut = size > limit;
      if (cut) incoming.pause();
      let bytes: Buffer;
      if (buf && size === buf.length) bytes = buf;
      else if (buf) {
        bytes = Buffer.allocUnsafeSlow(Math.min(size, limit + 1));
        buf.copy(bytes, 0, 0, bytes.length);
      } else {
        bytes = Buffer.allocUnsafeSlow(Math.min(size, limit + 1));
        let at = 0;
        for (const p of parts) at += p.copy(bytes, at, 0, Math.min(p.length, bytes.length - at));
      }
      resolve({ bytes, cut });
    };
    const onData = (piece: Buffer) => {
      if (buf && size + piece.length <= buf.length) piece.copy(buf, size);
      else {
        // More than declared (no Content-Length, or past limit + 1): keep the pieces.
        if (buf) {
          parts.push(buf.subarray(0, size));
          buf = null;
        }
        parts.push(piece);
      }
      size += piece.length;
      if (size > limit) done(null);
    };
    const onEnd = () => done(null);
    const onError = (err: Error) => done(err);
    const onClose = () => {
      if (!incoming.readableEnded) done(new Error('the client closed the connection before the body ended'));
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
    if (incoming.readableEnded) done(null);
  });
}
