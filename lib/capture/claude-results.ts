/**
 * What Claude Code payload fields become (issue 11), apart from `claude-code.ts`: a PostToolUse /
 * PostToolUseFailure's status, output, error and exit code; the pairing of calls that carry no
 * `tool_use_id` (by tool name and input, first in first out); the unmapped fields kept in `extra`.
 */
import { createHash } from 'node:crypto';
import type { ActionStatus } from '../log/events.js';
import type { ClaudeHookPayload } from './claude-code.js';

/** The part of the mapping state that pairs calls without `tool_use_id`. */
export interface FifoTable {
  /** hash of tool name and input → synthetic call ids, oldest first */
  fifo: Record<string, string[]>;
  /** counter of synthetic call ids */
  counter: number;
}

/** Pairing key of a call without `tool_use_id`: its tool and input, hashed. */
function pairKey(p: ClaudeHookPayload): string {
  return createHash('sha256')
    .update(`${p.tool_name ?? ''}\0${JSON.stringify(p.tool_input ?? null)}`)
    .digest('base64url')
    .slice(0, 22);
}

/** A synthetic call id for a PreToolUse without `tool_use_id`, queued under its tool and input. */
export function syntheticCall(st: FifoTable, p: ClaudeHookPayload): string {
  const id = `hook:${++st.counter}`;
  const key = pairKey(p);
  const list = st.fifo[key] ?? [];
  list.push(id);
  st.fifo[key] = list;
  return id;
}

/** The oldest synthetic call id queued under a result's tool and input, taken out; undefined if none. */
export function takeFifo(st: FifoTable, p: ClaudeHookPayload): string | undefined {
  const key = pairKey(p);
  const list = st.fifo[key];
  const id = list?.shift();
  if (list && list.length === 0) delete st.fifo[key];
  return id;
}

/**
 * Status, output, error and exit code of a PostToolUse / PostToolUseFailure. Bash answers
 * `{stdout, stderr, interrupted, …}`; a failed call arrives as PostToolUseFailure with `error`
 * ("Exit code N …"); a `tool_response` with `is_error`, `exit_code`/`exitCode` or `interrupted` says so.
 */
export function resultOf(p: ClaudeHookPayload): {
  status: ActionStatus;
  output: unknown;
  error: string | null;
  exitCode: number | null;
} {
  const r = p.tool_response;
  const obj =
    r !== null && typeof r === 'object' && !Array.isArray(r) ? (r as Record<string, unknown>) : null;
  const code = obj ? (num(obj.exit_code) ?? num(obj.exitCode) ?? num(obj.returnCode)) : null;
  if (p.hook_event_name === 'PostToolUseFailure' || p.error !== undefined) {
    const error = p.error ?? 'the tool call failed';
    const m = /exit code:? (\d+)/i.exec(error);
    return {
      status: p.is_interrupt ? 'cancelled' : 'error',
      output: r ?? null,
      error,
      exitCode: code ?? (m ? Number(m[1]) : null),
    };
  }
  if (obj?.interrupted === true)
    return { status: 'cancelled', output: r, error: 'interrupted', exitCode: code };
  if (obj?.is_error === true || (code !== null && code !== 0)) {
    const stderr = typeof obj?.stderr === 'string' && obj.stderr ? obj.stderr : null;
    return { status: 'error', output: r, error: stderr ?? `exit code ${code ?? 'unknown'}`, exitCode: code };
  }
  // Bash with no exit code in its response finished normally: Claude Code reports failures separately.
  const bashOk = p.tool_name === 'Bash' && obj !== null && 'stdout' in obj;
  return { status: 'ok', output: r ?? null, error: null, exitCode: code ?? (bashOk ? 0 : null) };
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) ? v : null;
}

/** Fields that are content (mapped into events, redacted there) or identity: never copied into `extra`. */
const MAPPED_KEYS = new Set([
  'session_id',
  'transcript_path',
  'cwd',
  'hook_event_name',
  'prompt',
  'tool_name',
  'tool_input',
  'tool_response',
  'tool_use_id',
  'last_assistant_message',
  'message',
  'error',
  'custom_instructions',
]);
/** An unknown field's value is kept in `extra` only when its JSON is this small (it is not redacted there). */
const MAX_EXTRA_JSON = 512;

/** The payload's fields that are not mapped, small ones only (they are not redacted in `extra`). */
export function extraOf(p: ClaudeHookPayload): Record<string, unknown> {
  const extra: Record<string, unknown> = { hook_event: p.hook_event_name };
  for (const [k, v] of Object.entries(p)) {
    if (MAPPED_KEYS.has(k) || v === undefined) continue;
    const json = JSON.stringify(v);
    if (json !== undefined && json.length <= MAX_EXTRA_JSON) extra[k] = v;
  }
  return extra;
}
