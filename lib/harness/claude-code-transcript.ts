/**
 * The Claude Code transcript importer (`hansard import claude-code FILE`, DESIGN §6): turns a Claude Code
 * transcript (`~/.claude/projects/<project>/<session>.jsonl`) into one writer's v3 segment (seed 001,
 * DESIGN §3), every event stamped with the transcript's own time.
 *
 * Mapping, record by record, in file order:
 * - a `user` record whose content is a string or holds a `text` block is a person's prompt: the open turn
 *   (if any) gets `turn.end`, then `message`, then `turn.start` naming that message as its context;
 * - a `user` record with only `tool_result` blocks is not a prompt: each block is an `agent.action_result`
 *   naming the `agent.action` whose `call_id` is its `tool_use_id`;
 * - `assistant` blocks: `tool_use` → `agent.action`, `text` → `agent.output`, `thinking` → `note` by
 *   `claude-code`, any other block → `note` by `hansard-import` holding the block's JSON;
 * - any other line (`summary`, `system`, …) → `note` by `hansard-import` holding the line exactly; a line
 *   that is not JSON → the same note and a problem. Nothing is dropped, and reading always goes on.
 *
 * @example
 * const r = await importClaudeCodeTranscript('~/.claude/projects/p/abc.jsonl', './sessions');
 * console.log(r.path, r.counts.turns, r.problems);
 */
import { createReadStream } from 'node:fs';
import { z } from 'zod';
import { splitLines } from '../log/reader.js';
import { parseTs } from '../log/time.js';
import { type EmitOptions, openSession, type SessionWriter } from '../log/writer.js';

/** What `importClaudeCodeTranscript` may be told. */
export interface ImportClaudeCodeOptions {
  /** `writer.start` `meta.agent`; default `claude-code` */
  agent?: string;
  /** the `user_id` of every prompt `message`; default `user` */
  userId?: string;
}

/** A transcript line the importer could not take as it is (it was still recorded, as a note). */
export interface ImportProblem {
  /** 1-based line number in the transcript */
  line: number;
  message: string;
}

/** What an import wrote. */
export interface ImportResult {
  /** the session id `s_…` */
  sid: string;
  /** the writer id `w_…` */
  w: string;
  /** the session directory */
  dir: string;
  /** the segment file written */
  path: string;
  /** events written, by kind (`writer.start`, `turn.end` and `writer.end` are not counted) */
  counts: {
    prompts: number;
    turns: number;
    actions: number;
    results: number;
    outputs: number;
    notes: number;
  };
  problems: ImportProblem[];
}

/** Author of the notes the importer writes for what it does not map (unknown lines and blocks). */
export const IMPORT_NOTE_AUTHOR = 'hansard-import';

// Transcript records (the boundary): lenient, extra keys kept, checked with safeParse.
const Content = z.union([z.string(), z.array(z.unknown())]);
const UserRecord = z.looseObject({
  type: z.literal('user'),
  message: z.looseObject({ content: Content }),
});
const AssistantRecord = z.looseObject({
  type: z.literal('assistant'),
  message: z.looseObject({ content: Content, stop_reason: z.string().nullish() }),
});
const AnyBlock = z.looseObject({ type: z.string() });
const TextBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
const ThinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string() });
const ToolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.unknown(),
});
const ToolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.unknown().optional(),
  is_error: z.boolean().nullish(),
});
type ToolResultBlock = z.infer<typeof ToolResultBlock>;

/** One transcript line as text. */
interface Line {
  line: number;
  text: string;
  /** false when the bytes are not valid UTF-8 (`text` is then a lossy decoding) */
  utf8: boolean;
}

/**
 * Imports a Claude Code transcript as a new session under `outDir` (DESIGN §6 `hansard import
 * claude-code`; format: seed 001, DESIGN §3). Writes one segment with `openSession(outDir, { agent, app:
 * 'hansard import claude-code' })` and ends it with `writer.end`.
 *
 * Times: each event's `ts` is its record's `timestamp` (µs precision, RFC 3339 UTC); a record without a
 * usable one takes the previous record's time. `mono` is seconds since the transcript's first timestamp,
 * never decreasing. `writer.start` carries the first timestamp and mono 0; `writer.end` the last. A
 * transcript with no timestamp at all is stamped with the current clock.
 *
 * Never throws on content: a line that is not JSON or not a usable record becomes a note holding its
 * text plus an entry in `problems`, and reading goes on. The last line is read whether or not it ends
 * with a newline. Throws the file system's errors (ENOENT reading `transcriptPath` — then nothing is
 * written — EACCES, ENOSPC) and `WriterError` from `openSession`.
 */
export async function importClaudeCodeTranscript(
  transcriptPath: string,
  outDir: string,
  options: ImportClaudeCodeOptions = {},
): Promise<ImportResult> {
  const firstAt = await firstTimestamp(transcriptPath);
  // The writer's clocks stand at the record being imported, so `writer.start` carries the transcript's
  // first time (mono 0) and nothing falls back to the importer's own clock.
  let at = firstAt;
  let mono = 0;
  const writer = openSession(
    outDir,
    { agent: options.agent ?? 'claude-code', app: 'hansard import claude-code' },
    firstAt === null ? {} : { clock: () => at ?? 0, monoClock: () => mono },
  );
  const importer = new TranscriptImporter(writer, options.userId ?? 'user');
  try {
    for await (const line of readLines(transcriptPath)) {
      const obj = parseObject(line.text);
      const ts = recordTime(line.line, obj, importer);
      if (ts !== null && firstAt !== null) {
        at = ts;
        mono = Math.max(mono, (ts - firstAt) / 1e6);
      }
      importer.take(line, obj, firstAt === null ? {} : { at: at!, mono });
    }
    importer.finish(firstAt === null ? {} : { at: at!, mono });
  } catch (err) {
    writer.close();
    throw err;
  }
  return {
    sid: writer.sid,
    w: writer.w,
    dir: writer.dir,
    path: writer.path,
    counts: importer.counts,
    problems: importer.problems,
  };
}

/** Maps records to events on one writer, keeping the open turn and the call id → action id table. */
class TranscriptImporter {
  readonly counts = { prompts: 0, turns: 0, actions: 0, results: 0, outputs: 0, notes: 0 };
  readonly problems: ImportProblem[] = [];
  private turnId: string | null = null;
  /** stop_reason of the open turn's last assistant record; undefined/null = no information */
  private lastStop: string | null | undefined;
  private readonly actionByCall = new Map<string, string>();

  constructor(
    private readonly w: SessionWriter,
    private readonly userId: string,
  ) {}

  problem(line: number, message: string): void {
    this.problems.push({ line, message });
  }

  /** Writes the events of one transcript line (`obj`: its `parseObject`), stamped `o`. */
  take(l: Line, obj: Record<string, unknown> | null | undefined, o: EmitOptions): void {
    if (!l.utf8) this.problem(l.line, 'line is not valid UTF-8');
    if (l.text.trim() === '') return; // a blank line carries nothing
    if (obj === undefined) this.problem(l.line, 'line is not valid JSON');
    else if (obj === null) this.problem(l.line, 'line is not a JSON object');
    else if (obj.type === 'user') {
      const r = UserRecord.safeParse(obj);
      if (r.success) {
        this.user(l.line, r.data.message.content, o);
        return;
      }
      this.problem(l.line, `user record not understood: ${zodSummary(r.error)}`);
    } else if (obj.type === 'assistant') {
      const r = AssistantRecord.safeParse(obj);
      if (r.success) {
        this.assistant(l.line, r.data.message.content, r.data.message.stop_reason, o);
        return;
      }
      this.problem(l.line, `assistant record not understood: ${zodSummary(r.error)}`);
    }
    // anything else (summary, system, …) or anything not understood is kept exactly as written
    this.note(IMPORT_NOTE_AUTHOR, l.text, o);
  }

  /** Ends the open turn and the segment. */
  finish(o: EmitOptions): void {
    this.endTurn(o);
    this.w.end({}, o);
  }

  private user(line: number, content: string | unknown[], o: EmitOptions): void {
    if (typeof content === 'string') {
      this.prompt(content, o);
      return;
    }
    const texts: string[] = [];
    const results: ToolResultBlock[] = [];
    const others: unknown[] = [];
    for (const block of content) {
      const t = TextBlock.safeParse(block);
      const r = ToolResultBlock.safeParse(block);
      if (t.success) texts.push(t.data.text);
      else if (r.success) results.push(r.data);
      else others.push(block);
    }
    // Results answer the actions of the turn already open, so they come before a new prompt ends it.
    for (const r of results) this.result(line, r, o);
    if (texts.length > 0) this.prompt(texts.join('\n\n'), o);
    for (const b of others) this.blockNote(line, b, o);
  }

  private prompt(text: string, o: EmitOptions): void {
    this.endTurn(o);
    const m = this.w.message({ user_id: this.userId, text }, o);
    this.counts.prompts += 1;
    this.openTurn([m.id], o);
  }

  private result(line: number, b: ToolResultBlock, o: EmitOptions): void {
    const actionId = this.actionByCall.get(b.tool_use_id);
    if (actionId === undefined) {
      this.problem(line, `tool_result ${JSON.stringify(b.tool_use_id)} answers no tool_use seen before it`);
    }
    const error = b.is_error === true;
    this.w.actionResult(
      {
        action_id: actionId ?? '',
        status: error ? 'error' : 'ok',
        output: error ? null : (b.content ?? null),
        error: error ? contentText(b.content) : null,
        exit_code: null,
      },
      o,
    );
    this.counts.results += 1;
  }

  private assistant(
    line: number,
    content: string | unknown[],
    stop: string | null | undefined,
    o: EmitOptions,
  ): void {
    const blocks: unknown[] = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
    for (const block of blocks) {
      const use = ToolUseBlock.safeParse(block);
      const text = TextBlock.safeParse(block);
      const thinking = ThinkingBlock.safeParse(block);
      if (use.success) {
        const turn_id = this.turnId ?? this.openTurn(null, o);
        const a = this.w.action(
          { turn_id, tool: use.data.name, input: use.data.input, call_id: use.data.id, caused_by: null },
          o,
        );
        this.actionByCall.set(use.data.id, a.id);
        this.counts.actions += 1;
      } else if (text.success) {
        const turn_id = this.turnId ?? this.openTurn(null, o);
        this.w.output({ turn_id, text: text.data.text, caused_by: null }, o);
        this.counts.outputs += 1;
      } else if (thinking.success) {
        this.note('claude-code', `thinking: ${thinking.data.thinking}`, o);
      } else this.blockNote(line, block, o);
    }
    // Read after the blocks: a turn opened by this record's own tool_use starts with no stop information.
    this.lastStop = stop;
  }

  private openTurn(context: string[] | null, o: EmitOptions): string {
    const t = this.w.turnStart({ context_message_ids: context }, o);
    this.counts.turns += 1;
    this.turnId = t.turn_id;
    this.lastStop = undefined;
    return t.turn_id;
  }

  /** `completed` after `end_turn` or when no stop_reason was recorded, else `interrupted`. */
  private endTurn(o: EmitOptions): void {
    if (this.turnId === null) return;
    const completed = this.lastStop === undefined || this.lastStop === null || this.lastStop === 'end_turn';
    this.w.turnEnd({ turn_id: this.turnId, status: completed ? 'completed' : 'interrupted' }, o);
    this.turnId = null;
  }

  /** A content block the mapping does not know: kept as its JSON. */
  private blockNote(line: number, block: unknown, o: EmitOptions): void {
    if (!AnyBlock.safeParse(block).success) this.problem(line, 'content block has no string "type"');
    this.note(IMPORT_NOTE_AUTHOR, JSON.stringify(block) ?? 'null', o);
  }

  private note(author: string, text: string, o: EmitOptions): void {
    this.w.note({ author, text }, o);
    this.counts.notes += 1;
  }
}

/** The parsed line: an object, `null` for JSON that is not an object, `undefined` for text that is not JSON. */
function parseObject(text: string): Record<string, unknown> | null | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return undefined;
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

/** The record's `timestamp` in µs since the epoch, or null (absent, or not a timestamp: a problem). */
function recordTime(
  line: number,
  obj: Record<string, unknown> | null | undefined,
  importer?: TranscriptImporter,
): number | null {
  if (!obj || obj.timestamp === undefined) return null;
  const parsed = typeof obj.timestamp === 'string' ? parseTs(obj.timestamp) : null;
  if (parsed === null) importer?.problem(line, `timestamp ${JSON.stringify(obj.timestamp)} is not RFC 3339`);
  return parsed ? parsed.micros : null;
}

/** The first record timestamp of the transcript (µs since the epoch), or null when it has none. */
async function firstTimestamp(path: string): Promise<number | null> {
  for await (const l of readLines(path)) {
    const t = recordTime(l.line, parseObject(l.text));
    if (t !== null) return t;
  }
  return null;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lossyUtf8 = new TextDecoder('utf-8');

/** The transcript's lines, the last one included whether or not a newline ends it. */
async function* readLines(path: string): AsyncGenerator<Line> {
  for await (const l of splitLines(createReadStream(path, { highWaterMark: 256 * 1024 }))) {
    let text: string;
    let utf8 = true;
    try {
      text = strictUtf8.decode(l.bytes);
    } catch {
      text = lossyUtf8.decode(l.bytes);
      utf8 = false;
    }
    yield { line: l.line, text, utf8 };
  }
}

/** A tool_result's content as the text of an error: a string as is, text blocks joined, anything else as JSON. */
function contentText(content: unknown): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const texts = content.map((b) => TextBlock.safeParse(b));
    if (texts.length > 0 && texts.every((t) => t.success)) return texts.map((t) => t.data!.text).join('\n');
  }
  return JSON.stringify(content);
}

function zodSummary(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`).join('; ');
}
