/**
 * Reading Codex rollout lines (`~/.codex/sessions/**\/rollout-*.jsonl`) for lib/importers/codex.ts: the
 * line reader, the pre-scan, and the shapes inside a `payload` (tool output, call arguments, message parts).
 * Pure functions; nothing here writes.
 */
import { createReadStream } from 'node:fs';
import { parseTs } from '../log/format/time.js';
import { splitLines } from '../log/read/reader.js';
import { isObj, type Obj, parseObject, str } from './json-line.js';

/**
 * A tool call's output, in the three shapes Codex writes: a JSON string
 * `{"output": …, "metadata": {"exit_code": N}}`; plain text starting `Exit code: N` (with `Output:` before
 * the command's output); or (Codex 0.169.0's unified exec) a header of `Key: value` lines holding
 * `Process exited with code N`, then `Output:` and the command's output. Anything else is kept as it is,
 * with no exit code.
 */
export function toolOutput(raw: unknown): { output: unknown; exitCode: number | null } {
  const text =
    typeof raw === 'string' ? raw : isObj(raw) && typeof raw.content === 'string' ? raw.content : null;
  if (text === null) return { output: raw ?? null, exitCode: null };
  const j = parseObject(text);
  if (isObj(j) && 'output' in j) {
    const code = isObj(j.metadata) ? j.metadata.exit_code : undefined;
    return { output: j.output, exitCode: Number.isInteger(code) ? (code as number) : null };
  }
  const m = /^Exit code: (-?\d+)\n/.exec(text);
  if (m) {
    const i = text.indexOf('Output:\n');
    return { output: i >= 0 ? text.slice(i + 'Output:\n'.length) : text, exitCode: Number(m[1]) };
  }
  // Unified exec: only the header (the lines before the first `Output:` line) is read, so a command
  // that prints "Process exited with code 0" itself cannot forge its exit code.
  const out = /^Output:$/m.exec(text);
  if (out) {
    const header = text.slice(0, out.index);
    const exited = /^Process exited with code (-?\d+)$/m.exec(header);
    if (exited && /^(?:(?:[A-Z][A-Za-z ]*: .*|Process exited with code -?\d+)\n)+$/.test(header))
      return { output: text.slice(out.index + 'Output:\n'.length), exitCode: Number(exited[1]) };
  }
  return { output: text, exitCode: null };
}

/**
 * Whether a `response_item` user message is context Codex put there rather than what the person typed:
 * the `<environment_context>` block, the AGENTS.md and user instructions it injects at the start of a
 * session. Used when a rollout has no separate record of the person's prompts to compare with.
 */
export function isInjectedContext(text: string): boolean {
  const t = text.trimStart();
  return (
    t.startsWith('<environment_context>') ||
    t.startsWith('<user_instructions>') ||
    t.startsWith('# AGENTS.md instructions') ||
    t.startsWith('<skills_instructions>')
  );
}

/** A `function_call`'s `arguments` (a JSON string) as its value; text that is not JSON is kept as text. */
export function parseArguments(args: unknown): unknown {
  if (typeof args !== 'string') return args ?? null;
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/** A message's `content` parts (`input_text`, `output_text`, …) as one text; a string as it is. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return JSON.stringify(content ?? null);
  return content
    .map((c) => (isObj(c) && typeof c.text === 'string' ? c.text : JSON.stringify(c)))
    .join('\n\n');
}

/**
 * Whether an `event_msg` payload is Codex's own record of what the person typed: `user_message` (before
 * 0.169), or `item_completed` of a `UserMessage` item (0.169.0).
 */
export function isUserMessageEvent(p: Obj): boolean {
  return (
    p.type === 'user_message' ||
    (p.type === 'item_completed' && isObj(p.item) && p.item.type === 'UserMessage')
  );
}

/** What `prescan` finds before the import writes anything. */
export interface RolloutScan {
  /** the first line's timestamp, µs since the epoch */
  firstAt: number | null;
  /** Codex recorded the person's prompts separately (`isUserMessageEvent`) */
  hasUserMessages: boolean;
  /** the rollout has `token_usage_record` lines (0.169.0), so `token_count` events only repeat them */
  hasUsageRecords: boolean;
  codexSessionId: string | null;
}

/** A rollout's first timestamp, which prompt and usage records it has, and the Codex session id. */
export async function prescan(path: string): Promise<RolloutScan> {
  let firstAt: number | null = null;
  let hasUserMessages = false;
  let hasUsageRecords = false;
  let codexSessionId: string | null = null;
  for await (const l of readLines(path)) {
    const obj = parseObject(l.text);
    if (!isObj(obj)) continue;
    const ts = typeof obj.timestamp === 'string' ? parseTs(obj.timestamp) : null;
    if (firstAt === null && ts !== null) firstAt = ts.micros;
    const p = obj.payload;
    if (obj.type === 'event_msg' && isObj(p) && isUserMessageEvent(p)) hasUserMessages = true;
    if (obj.type === 'token_usage_record') hasUsageRecords = true;
    if (obj.type === 'session_meta' && isObj(p) && codexSessionId === null) codexSessionId = str(p.id);
  }
  return { firstAt, hasUserMessages, hasUsageRecords, codexSessionId };
}

const lossyUtf8 = new TextDecoder('utf-8');

/** The rollout's lines (1-based), the last one included whether or not a newline ends it. */
export async function* readLines(path: string): AsyncGenerator<{ line: number; text: string }> {
  for await (const l of splitLines(createReadStream(path, { highWaterMark: 256 * 1024 }))) {
    yield { line: l.line, text: lossyUtf8.decode(l.bytes) };
  }
}

/**
 * A model response's token counts as a note (issue 27; the contract is lib/log/format/usage-note.ts,
 * `usage_source: 'codex_total'`): the text gives the response's own counts (`usage`), or the thread's
 * running total when that is all `p` has (labelled so); `extra` holds Codex's figures as written
 * (`usage`, `turn_token_usage`, `thread_token_usage`, `response_id`, those present), never summed: a
 * `token_count` repeating the last total is recorded as it is (the counting rule knows it is a copy).
 * `model`: the model in effect (the latest `turn_context`'s, else `session_meta`'s; null when neither says).
 */
export function usageNote(
  p: unknown,
  model: string | null = null,
): { text: string; extra: Record<string, unknown> } {
  const u = isObj(p) ? p : {};
  const own = isObj(u.usage);
  const fig = own ? (u.usage as Obj) : isObj(u.thread_token_usage) ? u.thread_token_usage : {};
  const n = (k: string) => (Number.isFinite(fig[k]) ? (fig[k] as number) : 0);
  const text =
    `token usage${own ? '' : ' (thread total)'}: input ${n('input_tokens')} (cached ${n('cached_input_tokens')}), ` +
    `output ${n('output_tokens')} (reasoning ${n('reasoning_output_tokens')}), total ${n('total_tokens') || n('input_tokens') + n('output_tokens')}`;
  const extra: Record<string, unknown> = { codex_type: 'token_usage', usage_source: 'codex_total', model };
  for (const k of ['usage', 'turn_token_usage', 'thread_token_usage', 'response_id'])
    if (u[k] !== undefined) extra[k] = u[k];
  return { text, extra };
}

/**
 * The model a rollout line says is in effect from now on, or null when it says none: a `turn_context`'s
 * `model` (Codex writes one per turn, and after a compaction), a `session_meta`'s `model` (some releases),
 * an `event_msg` `model_reroute`'s `to_model` (Codex moved the turn to another model). `session_meta` is
 * `fallback`: it never replaces a model a `turn_context` named.
 */
export function modelOf(obj: Obj): { model: string; fallback: boolean } | null {
  const p = obj.payload;
  if (!isObj(p)) return null;
  if (obj.type === 'turn_context' && str(p.model)) return { model: p.model as string, fallback: false };
  if (obj.type === 'session_meta' && str(p.model)) return { model: p.model as string, fallback: true };
  if (obj.type === 'event_msg' && p.type === 'model_reroute' && str(p.to_model))
    return { model: p.to_model as string, fallback: false };
  return null;
}
