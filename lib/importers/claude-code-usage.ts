/**
 * Claude Code's per-message token usage → `token_usage` notes (issue 27; the contract is
 * lib/log/format/usage-note.ts, `usage_source: 'claude_message'`; docs/import.md "Token usage"). The
 * importers record what Claude Code reported and count nothing: the rules live in lib/log/analyse/usage/.
 *
 * Claude Code writes a streamed assistant message several times, one record per content block, each with
 * the same `message.id` and the usage as it stood then (`output_tokens` growing). One note is written per
 * message id, with the figures of its last record, right after that record's own events (so in the turn
 * the message belongs to, before that turn's `turn.end`, stamped with that record's time). Where the last
 * record is was found before anything was written (`UsageLookahead`, filled by the importer's prescan):
 * holding a note back until the next message would put it after later events (a tool's result) with an
 * earlier time, which `verify` reports as `ts_backwards`.
 *
 * stream-json with `--include-partial-messages` also prints the message's `message_delta` event after its
 * last `assistant` record; its `usage` is the message's final count (the Messages API says its figures are
 * cumulative), so it updates the message's figures the way the API's own clients do (its fields over the
 * record's) and the note says so (`usage_from: 'message_delta'`).
 */
import type { EmitOptions } from '../log/write/writer.js';
import { IMPORT_NOTE_AUTHOR } from './import-problems.js';
import { isObj, type Obj, str } from './json-line.js';
import type { WriterMapping } from './mapping.js';

/** The model Claude Code names on its own placeholder messages (an API error, an interruption): no call was made, its usage is all zero. */
export const SYNTHETIC_MODEL = '<synthetic>';

/** What one assistant record says of its message's usage. */
interface Figures {
  messageId: string | null;
  model: string | null;
  usage: Obj;
  requestId: string | null;
  costUsd: number | null;
  /** set when a stream-json `message_delta` updated the record's usage */
  fromDelta: boolean;
}

/**
 * The usage an `assistant` record reports (`message.usage`, `message.id`, `message.model`, the record's
 * `requestId`/`request_id` and top-level `costUSD`), or null when it reports none or is one of Claude
 * Code's `<synthetic>` placeholders.
 */
function figuresOf(obj: Obj): Figures | null {
  if (obj.type !== 'assistant' || !isObj(obj.message) || !isObj(obj.message.usage)) return null;
  const model = str(obj.message.model);
  if (model === SYNTHETIC_MODEL) return null;
  return {
    messageId: str(obj.message.id),
    model,
    usage: obj.message.usage,
    requestId: str(obj.requestId) ?? str(obj.request_id),
    costUsd: typeof obj.costUSD === 'number' && Number.isFinite(obj.costUSD) ? obj.costUSD : null,
    fromDelta: false,
  };
}

/** The writer a stream-json record is for: its launching call (`parent_tool_use_id`), or the main one. */
const streamOf = (obj: Obj): string => str(obj.parent_tool_use_id) ?? '';

/**
 * The message each stream-json writer is streaming, from its `message_start` event; a `message_delta`
 * belongs to it (the events carry no message id of their own).
 */
class Streaming {
  private readonly current = new Map<string, string>();

  /** The message id a record's figures are of (`null`: none), noting a `message_start`. */
  idOf(obj: Obj): string | null {
    if (obj.type === 'assistant') return isObj(obj.message) ? str(obj.message.id) : null;
    if (obj.type !== 'stream_event' || !isObj(obj.event)) return null;
    const e = obj.event;
    if (e.type === 'message_start' && isObj(e.message)) {
      const id = str(e.message.id);
      if (id !== null) this.current.set(streamOf(obj), id);
      return null;
    }
    if (e.type === 'message_delta' && isObj(e.usage)) return this.current.get(streamOf(obj)) ?? null;
    return null;
  }
}

const keyOf = (file: string | undefined, id: string) => `${file ?? ''}\u0000${id}`;

/**
 * Where each message id's last usage record is, per file (`file`: a subagent file's key, undefined for the
 * transcript or the stream). Filled by the importer's prescan, before anything is written.
 */
export class UsageLookahead {
  private readonly last = new Map<string, number>();
  private readonly streaming = new Map<string | undefined, Streaming>();

  /** Whether a line may be a usage record (a cheap test before parsing it: a tool result's `usage` is not). */
  static mayMatter(text: string): boolean {
    if (text.includes('"message_start"')) return true;
    return text.includes('"usage"') && (text.includes('"assistant"') || text.includes('"message_delta"'));
  }

  /** Notes line `line` (1-based) of `file` when it is a record of a message's usage. */
  observe(obj: Obj, line: number, file?: string): void {
    let s = this.streaming.get(file);
    if (s === undefined) {
      s = new Streaming();
      this.streaming.set(file, s);
    }
    const id = s.idOf(obj);
    if (id !== null && (obj.type !== 'assistant' || figuresOf(obj) !== null))
      this.last.set(keyOf(file, id), line);
  }

  /** Whether line `line` of `file` is the last record of message `id` (true when the prescan did not see it). */
  isLast(id: string, line: number, file?: string): boolean {
    const l = this.last.get(keyOf(file, id));
    return l === undefined || l <= line;
  }
}

interface Pending {
  m: WriterMapping;
  f: Figures;
  o: EmitOptions;
}

/**
 * Writes the `claude_message` usage notes of one import: one per message id, on the writer of the
 * message's records, after its last record (`lookahead`; without one, after every record).
 */
export class ClaudeUsageNotes {
  /** `token_usage` notes written */
  written = 0;
  private readonly pending = new Map<string, Pending>();
  private readonly streaming = new Streaming();

  constructor(private readonly lookahead: UsageLookahead | null) {}

  /**
   * An `assistant` record (line `line` of `file`) whose events were just written on `m`, stamped `o`: its
   * figures are held as the message's latest, and written when it is the message's last record.
   */
  assistant(m: WriterMapping, line: number, obj: Obj, o: EmitOptions, file?: string): void {
    const f = figuresOf(obj);
    if (f === null) return;
    if (f.messageId === null) {
      // Nothing ties such records to one message: each is written as it is (none seen from 1.0 on).
      this.write({ m, f, o });
      return;
    }
    const key = keyOf(file, f.messageId);
    this.pending.set(key, { m, f, o });
    if (this.lookahead === null || this.lookahead.isLast(f.messageId, line, file)) this.flushKey(key);
  }

  /**
   * A stream-json `stream_event` (line `line`, stamped `o`): `message_start` names the message its writer
   * streams; a `message_delta` with `usage` updates that message's figures (its fields over the record's).
   */
  streamEvent(line: number, obj: Obj, o: EmitOptions): void {
    const id = this.streaming.idOf(obj);
    if (id === null || !isObj(obj.event) || !isObj(obj.event.usage)) return;
    const key = keyOf(undefined, id);
    const p = this.pending.get(key);
    if (p === undefined) return; // a message no assistant record was written for: no writer to note it on
    p.f = { ...p.f, usage: { ...p.f.usage, ...obj.event.usage }, fromDelta: true };
    p.o = o;
    if (this.lookahead === null || this.lookahead.isLast(id, line)) this.flushKey(key);
  }

  /** Writes every message still held (before turns end at the end of the file, or a `result`). */
  flush(): void {
    for (const key of [...this.pending.keys()]) this.flushKey(key);
  }

  private flushKey(key: string): void {
    const p = this.pending.get(key);
    if (p === undefined) return;
    this.pending.delete(key);
    this.write(p);
  }

  private write({ m, f, o }: Pending): void {
    const extra: Record<string, unknown> = {
      usage_source: 'claude_message',
      message_id: f.messageId,
      model: f.model,
      usage: f.usage,
    };
    if (f.requestId !== null) extra.request_id = f.requestId;
    if (f.costUsd !== null) extra.cost_usd = f.costUsd;
    if (f.fromDelta) extra.usage_from = 'message_delta';
    m.marked('token_usage', IMPORT_NOTE_AUTHOR, usageLine(f.model, f.usage), o, extra);
    this.written += 1;
  }
}

/** `usage MODEL: input N (cache read N, cache write N), output N`; a figure not reported reads `?`. */
export function usageLine(model: string | null, u: Obj): string {
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : '?');
  return (
    `usage ${model ?? 'unknown model'}: input ${n(u.input_tokens)} (cache read ` +
    `${n(u.cache_read_input_tokens)}, cache write ${n(u.cache_creation_input_tokens)}), output ${n(u.output_tokens)}`
  );
}
