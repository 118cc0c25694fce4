/**
 * The stdio transport's one limit, held without losing the server (issue 24 item 5, docs/mcp.md
 * "Limits"). The MCP SDK's `StdioServerTransport` buffers at most 10 MiB of a line
 * (`STDIO_DEFAULT_MAX_BUFFER_SIZE`); past that it throws and closes, and `hansard mcp serve` exited 0
 * without answering, so every later call of that agent failed.
 *
 * `LineLimit` stands between stdin and the SDK's transport: it hands on whole lines that fit, one line
 * per chunk (so the SDK's buffer never holds more than one line), and a longer line never reaches the
 * SDK. Of such a line it keeps no more than the limit while it is under it, then only what `TopFields`
 * reads as the bytes go by (the request's `id`, `method` and `params.name`), and reports it
 * (`onOversize`) when its newline comes. `oversizeAnswer` is what the server answers then.
 *
 * `TopFields` is a byte scanner rather than a streaming JSON library: those build every string value
 * they pass (a 10 MB message text), and three top-level fields are all that is needed.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MAX_CALL_CHARS, MAX_SUBAGENT_MESSAGES } from './subagent.js';

/** The most bytes one JSON-RPC message may take on stdin, its newline included: the SDK's 10 MiB. */
export const MAX_MESSAGE_BYTES: number = STDIO_DEFAULT_MAX_BUFFER_SIZE;

/** A line over the limit, as `TopFields` read it. */
export interface OversizeLine {
  /** its length in bytes, without its newline */
  bytes: number;
  /** the top-level `id` (a string or a number), null when it has none or it could not be read */
  id: string | number | null;
  /** the top-level `method`, when it is a string */
  method: string | null;
  /** `params.name` (the tool of a `tools/call`), when it is a string */
  tool: string | null;
}

const NEWLINE = Buffer.from('\n');

/** Splits a byte stream into lines: those within `maxBytes` (newline included) pass, longer ones are reported. */
export class LineLimit extends Transform {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** set while the current line is over the limit */
  private scan: TopFields | null = null;
  private scannedBytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly onOversize: (line: OversizeLine) => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer | string, encoding: BufferEncoding, done: TransformCallback): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
    let start = 0;
    while (start < buf.length) {
      const nl = buf.indexOf(0x0a, start);
      this.addPiece(buf.subarray(start, nl === -1 ? buf.length : nl));
      if (nl === -1) break;
      this.endLine();
      start = nl + 1;
    }
    done();
  }

  /** A last line without its newline is dropped, as the SDK drops it: it was never a whole message. */
  override _flush(done: TransformCallback): void {
    this.pending = [];
    this.scan = null;
    done();
  }

  private addPiece(piece: Buffer): void {
    if (this.scan) {
      this.scan.feed(piece);
      this.scannedBytes += piece.length;
      return;
    }
    if (this.pendingBytes + piece.length + 1 > this.maxBytes) {
      this.scan = new TopFields();
      for (const p of this.pending) this.scan.feed(p);
      this.scan.feed(piece);
      this.scannedBytes = this.pendingBytes + piece.length;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    if (piece.length > 0) {
      this.pending.push(piece);
      this.pendingBytes += piece.length;
    }
  }

  private endLine(): void {
    if (this.scan) {
      const line = { bytes: this.scannedBytes, ...this.scan.fields() };
      this.scan = null;
      this.scannedBytes = 0;
      this.onOversize(line);
      return;
    }
    this.pending.push(NEWLINE);
    this.push(Buffer.concat(this.pending));
    this.pending = [];
    this.pendingBytes = 0;
  }
}

/** Longest key, and longest `id`/`method`/`name` value, in bytes, that `TopFields` keeps. */
const MAX_KEY_BYTES = 64;
const MAX_VALUE_BYTES = 1024;

/**
 * Reads the top-level `id` and `method` and `params.name` of a JSON object as its bytes go by, keeping
 * nothing else: JSON's strings, escapes and nesting are followed so that a key inside a string or a
 * deeper object is not taken for them. Malformed JSON gives whatever was read before it went wrong.
 */
export class TopFields {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** at depths 1 and 2: whether the container there is an object, and whether a key comes next */
  private readonly isObject = [false, false, false];
  private readonly wantKey = [false, false, false];
  /** the latest key read at depths 1 and 2 */
  private readonly key: (string | null)[] = [null, null, null];
  /** the bytes of the string or scalar being kept, and what it is */
  private kept: number[] | null = null;
  private keptAs: 'key' | 'id' | 'method' | 'tool' | null = null;
  private keptScalar = false;
  private readonly found: Omit<OversizeLine, 'bytes'> = { id: null, method: null, tool: null };

  /** Reads the next bytes of the line. */
  feed(buf: Buffer): void {
    for (let i = 0; i < buf.length; i++) {
      const b = buf[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (b === 0x5c) this.escaped = true;
        else if (b === 0x22) {
          this.inString = false;
          this.endKept();
          continue;
        }
        this.keep(b);
        continue;
      }
      if (this.keptScalar) {
        if (b === 0x2c || b === 0x7d || b === 0x5d || b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) {
          this.endKept();
        } else {
          this.keep(b);
          continue;
        }
      }
      this.structural(b);
    }
  }

  /** What was found. */
  fields(): Omit<OversizeLine, 'bytes'> {
    if (this.keptScalar) this.endKept();
    return { ...this.found };
  }

  private structural(b: number): void {
    const d = this.depth;
    switch (b) {
      case 0x22: // "
        this.inString = true;
        if (d <= 2 && this.isObject[d] && this.wantKey[d]) this.startKept('key');
        else this.startKept(this.target());
        return;
      case 0x7b: // {
      case 0x5b: // [
        this.depth++;
        if (this.depth <= 2) {
          this.isObject[this.depth] = b === 0x7b;
          this.wantKey[this.depth] = b === 0x7b;
          this.key[this.depth] = null;
        }
        return;
      case 0x7d: // }
      case 0x5d: // ]
        this.depth = Math.max(0, d - 1);
        return;
      case 0x3a: // :
        if (d <= 2) this.wantKey[d] = false;
        return;
      case 0x2c: // ,
        if (d <= 2 && this.isObject[d]) this.wantKey[d] = true;
        return;
      case 0x20:
      case 0x09:
      case 0x0a:
      case 0x0d:
        return;
      default: {
        // a number or a literal: kept when it is the top-level id
        const t = this.target();
        if (t === 'id') {
          this.startKept('id');
          this.keptScalar = true;
          this.keep(b);
        }
      }
    }
  }

  /** Which wanted field the value starting here is, if any. */
  private target(): 'id' | 'method' | 'tool' | null {
    const d = this.depth;
    if (d === 1 && this.isObject[1] && !this.wantKey[1]) {
      if (this.key[1] === 'id') return 'id';
      if (this.key[1] === 'method') return 'method';
    }
    if (d === 2 && this.isObject[1] && this.key[1] === 'params' && this.isObject[2] && !this.wantKey[2]) {
      if (this.key[2] === 'name') return 'tool';
    }
    return null;
  }

  private startKept(as: TopFields['keptAs']): void {
    this.keptAs = as;
    this.kept = as ? [] : null;
  }

  private keep(b: number): void {
    if (!this.kept) return;
    if (this.kept.length >= (this.keptAs === 'key' ? MAX_KEY_BYTES : MAX_VALUE_BYTES)) {
      // too long to be a field that is looked for: read as none (a key as no key)
      this.kept = null;
      return;
    }
    this.kept.push(b);
  }

  private endKept(): void {
    const raw = this.kept ? Buffer.from(this.kept).toString('utf8') : null;
    const as = this.keptAs;
    const scalar = this.keptScalar;
    this.kept = null;
    this.keptAs = null;
    this.keptScalar = false;
    if (as === 'key') {
      const key = raw === null ? null : parse(`"${raw}"`);
      this.key[this.depth] = typeof key === 'string' ? key : null;
      return;
    }
    if (as === null || raw === null) return;
    const value = parse(scalar ? raw : `"${raw}"`);
    if (as === 'id') {
      this.found.id =
        typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) ? value : null;
    } else if (typeof value === 'string') {
      this.found[as] = value;
    }
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** One sentence for a line over the limit: its size, the limit and where it comes from. */
export function oversizeSentence(line: OversizeLine, maxBytes: number): string {
  const what = line.method === 'tools/call' ? `this ${line.tool ?? 'tool'} call` : 'this message';
  return `${what} was not read: its JSON-RPC message is ${fmt(line.bytes + 1)} bytes, over the ${fmt(maxBytes)} bytes (${Math.round(maxBytes / 1024 / 1024)} MiB) one message to hansard mcp serve may be (the MCP SDK's stdio limit); nothing was done`;
}

/**
 * What the server answers to a line over the limit: for a `tools/call`, a tool error (`isError`) whose
 * text names the limit and, for `capture_subagent_messages`, how to split the call; for any other
 * request, a JSON-RPC error -32600 (Invalid Request) saying the same; for a notification or a line whose
 * id could not be read, nothing (there is no one to answer).
 */
export function oversizeAnswer(line: OversizeLine, maxBytes: number): JSONRPCMessage | null {
  if (line.id === null || line.method === null) return null;
  const sentence = oversizeSentence(line, maxBytes);
  if (line.method !== 'tools/call') {
    return {
      jsonrpc: '2.0',
      id: line.id,
      error: { code: -32600, message: sentence, data: { bytes: line.bytes + 1, max_bytes: maxBytes } },
    };
  }
  const hint =
    line.tool === 'capture_subagent_messages'
      ? `. Send the subagent's messages in several calls, each of at most ${MAX_SUBAGENT_MESSAGES} messages and ${fmt(MAX_CALL_CHARS)} characters of text, output and input together (docs/mcp.md).`
      : '.';
  return {
    jsonrpc: '2.0',
    id: line.id,
    result: { isError: true, content: [{ type: 'text', text: `${sentence}${hint}` }] },
  };
}
