/**
 * What each kind of Codex rollout line is, for lib/importers/codex.ts (issue 25 item 4): the line, item and
 * event types of current Codex releases that are kept as they are, dropped as copies or telemetry, or read
 * for a call's outcome, and how a compaction's `replacement_history` is read. Pure; nothing here writes.
 *
 * Sources: openai/codex `codex-rs/protocol` (`RolloutItem`, `ResponseItem`, `EventMsg`), `codex-rs/history`
 * (`RolloutItemWire`, `CompactedItem`) and `codex-rs/rollout/src/policy.rs` (which of them a rollout
 * persists, in its Limited and Extended modes). docs/import.md lists each with what hansard records.
 */
import { contentText, isInjectedContext } from './codex-records.js';
import { isObj, type Obj, str } from './json-line.js';

/** Author of the notes that hold what Codex itself wrote but v3 has no event for (reasoning, context). */
export const CODEX_NOTE_AUTHOR = 'codex';

/**
 * Top-level line types that are settings, context or bookkeeping no v3 event says: each kept exactly as
 * a `meta` note. `session_meta`, `turn_context`, `world_state` (0.169.0); the rest from `RolloutItemWire`.
 */
export const META_LINES = new Set([
  'session_meta',
  'turn_context',
  'world_state',
  'inter_agent_communication',
  'inter_agent_communication_metadata',
  'retained_context',
  'security_risk_score',
  'realtime_item',
]);

/**
 * `response_item` payload types kept exactly as a `meta` note: the harness's own working-tree snapshot
 * (`ghost_snapshot`), a message between agents (`agent_message`: author → recipient, not the answer to the
 * person), and request controls a rollout may hold (`additional_tools`, `configuration_update`).
 */
export const META_ITEMS = new Set([
  'ghost_snapshot',
  'agent_message',
  'additional_tools',
  'configuration_update',
]);

/**
 * `event_msg` types kept exactly as a `meta` note: thread settings and names, goals, rollbacks, undo, review
 * mode, the approval reviewer's assessments, and subagent (collab) activity.
 */
export const META_EVENTS = new Set([
  'thread_settings_applied',
  'thread_name_updated',
  'thread_goal_updated',
  'thread_rolled_back',
  'thread_context_usage_updated',
  'thread_skills_updated',
  'undo_completed',
  'entered_review_mode',
  'exited_review_mode',
  'guardian_assessment',
  'model_reroute',
  'sub_agent_activity',
  'collab_agent_spawn_end',
  'collab_agent_interaction_end',
  'collab_waiting_end',
  'collab_close_end',
  'collab_resume_end',
]);

/**
 * `event_msg` types that repeat what `response_item`s already say, or are telemetry: counted, not
 * written. `exec_command_end`, `patch_apply_end` and `mcp_tool_call_end` are still read for the outcome of
 * their call (`callOutcome`); `web_search_end` and `image_generation_end` are copies of their items.
 */
export const SKIPPED_EVENTS = new Set([
  'token_count',
  'task_started',
  'turn_started',
  'exec_command_begin',
  'exec_command_end',
  'patch_apply_begin',
  'patch_apply_end',
  'mcp_tool_call_begin',
  'mcp_tool_call_end',
  'web_search_begin',
  'image_generation_begin',
  'view_image_tool_call',
  'dynamic_tool_call_request',
  'dynamic_tool_call_response',
]);

/**
 * What an `event_msg` says about how its call ended, when the call's output item may not: the exit code
 * of `exec_command_end`, a patch `patch_apply_end` did not apply, an MCP tool's error result. Null when it
 * says nothing (or is another type).
 */
export function callOutcome(
  p: Obj,
): { callId: string; exitCode: number | null; failure: string | null } | null {
  const callId = str(p.call_id);
  if (callId === null) return null;
  if (p.type === 'exec_command_end' && Number.isInteger(p.exit_code))
    return { callId, exitCode: p.exit_code as number, failure: null };
  if (p.type === 'patch_apply_end' && p.success === false)
    return { callId, exitCode: null, failure: 'patch not applied' };
  if (p.type === 'mcp_tool_call_end' && isObj(p.result)) {
    const r = p.result;
    if (r.Err !== undefined) return { callId, exitCode: null, failure: `MCP tool error: ${String(r.Err)}` };
    if (isObj(r.Ok) && r.Ok.isError === true)
      return { callId, exitCode: null, failure: 'MCP tool returned an error' };
  }
  return null;
}

/** Summary prefixes Codex puts before the handoff summary it adds to a compacted history. */
const SUMMARY_PREFIXES = ['Another language model started to solve this problem'];

/** What a `compacted` line's payload says. */
export interface CompactedReading {
  /** the summary: `message` when set, else the handoff summary inside `replacement_history` */
  summary: string | null;
  /** items in `replacement_history` (0 when it has none) */
  items: number;
  /** user messages in it that repeat a prompt already recorded (never taken as new prompts) */
  repeatedPrompts: number;
  /** `replacement_history` holds an encrypted `compaction` item (server-side compaction) */
  encrypted: boolean;
}

/**
 * Reads a `compacted` payload (`{message, replacement_history?: ResponseItem[]}`). The history repeats the
 * person's prompts (`seenPrompts` holds those recorded so far) and ends with a handoff summary as a user
 * message: the summary is `message` when non-empty, else the user message there that starts with Codex's
 * summary prefix, else the last one that is neither a repeated prompt nor injected context.
 */
export function readCompacted(p: Obj, seenPrompts: ReadonlySet<string>): CompactedReading {
  const history = Array.isArray(p.replacement_history) ? p.replacement_history : [];
  let repeatedPrompts = 0;
  let encrypted = false;
  let prefixed: string | null = null;
  let last: string | null = null;
  for (const item of history) {
    if (!isObj(item)) continue;
    if (
      item.type === 'compaction' ||
      item.type === 'compaction_summary' ||
      item.type === 'context_compaction'
    )
      encrypted = true;
    if (item.type !== 'message' || item.role !== 'user') continue;
    const text = contentText(item.content);
    if (seenPrompts.has(text)) repeatedPrompts += 1;
    else if (!isInjectedContext(text)) {
      last = text;
      if (SUMMARY_PREFIXES.some((s) => text.trimStart().startsWith(s))) prefixed = text;
    }
  }
  const message = str(p.message)?.trim() ? (p.message as string) : null;
  return { summary: message ?? prefixed ?? last, items: history.length, repeatedPrompts, encrypted };
}

/** A `web_search_call`'s action (`search` with `query`/`queries`, `open_page` with `url`, `find_in_page`). */
export function webSearchKey(action: unknown, query?: unknown): string {
  if (typeof query === 'string' && query !== '') return query;
  if (!isObj(action)) return '';
  return (
    str(action.query) ??
    (Array.isArray(action.queries) ? action.queries.join(' | ') : null) ??
    str(action.url) ??
    JSON.stringify(action)
  );
}

/** The text of a `reasoning` item's `content` parts (`reasoning_text`, `text`), or null when it has none. */
export function reasoningContent(content: unknown): string | null {
  if (!Array.isArray(content)) return null;
  const parts = content.map((c) => (isObj(c) ? str(c.text) : null)).filter((t): t is string => !!t);
  return parts.length > 0 ? parts.join('\n\n') : null;
}
