/**
 * What Claude Code payload fields become (issue 11), apart from `claude-code.ts`: a PostToolUse /
 * PostToolUseFailure's status, output, error and exit code; the pairing of calls that carry no
 * `tool_use_id` (by tool name and input, first in first out); the unmapped fields kept in `extra`.
 */
import { createHash } from 'node:crypto';
import { claudeResultOutcome } from '../../importers/claude-code-outcome.js';
import type { ActionStatus } from '../../log/format/events.js';
import type { ClaudeHookPayload } from './claude-types.js';

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
 * Status, output, error and exit code of a PostToolUse / PostToolUseFailure: the tool's response as
 * output, the rest as lib/importers/claude-code-outcome.ts reads Claude Code's report, the same reading the
 * transcript and stream-json importers make of the same call (docs/capture.md). Bash answers
 * `{stdout, stderr, interrupted, …}` (exit 0 when it finished in the foreground and Claude Code read no
 * non-zero exit); a failed call arrives as PostToolUseFailure with `error` ("Exit code N …").
 */
export function resultOf(p: ClaudeHookPayload): {
  status: ActionStatus;
  output: unknown;
  error: string | null;
  exitCode: number | null;
} {
  const failed = p.hook_event_name === 'PostToolUseFailure' || p.error !== undefined;
  const outcome = claudeResultOutcome({
    tool: p.tool_name ?? null,
    failed,
    text: p.error ?? null,
    response: p.tool_response ?? null,
    interrupt: p.is_interrupt,
  });
  return { ...outcome, output: p.tool_response ?? null };
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
