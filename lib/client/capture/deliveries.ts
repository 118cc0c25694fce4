/**
 * Duplicate deliveries (issue 25 item 2). A hook registered twice (user and project settings naming
 * different commands, a plugin repeating the user's hook) makes Claude Code run it twice for one event:
 * two processes at the same moment with the same payload. Codex may run `notify` twice for one turn.
 * Recorded twice, one tool call became three actions. A delivery is recognised as one already recorded,
 * under the session's lock, by what identifies the event:
 *
 * - an event carrying `tool_use_id` (PreToolUse, PostToolUse/PostToolUseFailure: one result per call,
 *   PermissionRequest, any newer tool event): its event name and that id;
 * - UserPromptSubmit carrying `prompt_id`: that id and the prompt's text;
 * - SubagentStart/SubagentStop carrying `agent_id`: the subagent's state (started and still running;
 *   stopped), in `claude-code.ts`;
 * - any other event (Stop, SessionStart, SessionEnd, PreCompact, Notification, a prompt without
 *   `prompt_id`, a tool event without `tool_use_id`): a payload identical to the previous one recorded on
 *   the same stream (the main agent, or the subagent it names). Nothing identifies these events, and the
 *   agent does nothing in between two copies of one (these hooks fire where it waits); a person sending
 *   the same prompt twice with nothing in between is kept too, as the note below.
 *
 * A duplicate writes no event of its own: at most a `note` marked `import_kind: "duplicate"` naming what
 * it repeats, in the stream it belongs to while that stream's writer is open.
 */
import { createHash } from 'node:crypto';
import type { StreamState, SubagentStream } from './claude-types.js';

/** How many identifying keys a session's state keeps (newest last): copies arrive within moments. */
export const MAX_DELIVERY_KEYS = 512;

/** Fields hansard adds to a payload (a deferred one's id): not part of what the agent delivered. */
const ADDED_FIELDS = new Set(['hook_deferred']);

/** The delivery's fingerprint: a hash of its JSON as delivered (22 base64url characters). */
export function fingerprint(p: Record<string, unknown>): string {
  const own: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) if (!ADDED_FIELDS.has(k)) own[k] = v;
  return shortHash(JSON.stringify(own));
}

/** A short stable hash of `text` (sha256, 22 base64url characters). */
export function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

/** `keys` with `key` appended, the oldest dropped past `MAX_DELIVERY_KEYS`. */
export function remember(keys: string[] | undefined, key: string): string[] {
  const out = [...(keys ?? []), key];
  return out.length > MAX_DELIVERY_KEYS ? out.slice(-MAX_DELIVERY_KEYS) : out;
}

/** What a Claude Code payload needs here (a subset of `ClaudeHookPayload`). */
interface ClaudeDelivery {
  hook_event_name: string;
  tool_use_id?: string | undefined;
  prompt?: string | undefined;
  prompt_id?: unknown;
}

/**
 * The key that identifies a Claude Code delivery, or null when nothing in it does (the stream's previous
 * payload decides then). PostToolUse and PostToolUseFailure share one key: a call has one result.
 */
export function claudeDeliveryKey(p: ClaudeDelivery): string | null {
  if (p.tool_use_id) return `${toolEventKind(p.hook_event_name)}:${p.tool_use_id}`;
  if (p.hook_event_name === 'UserPromptSubmit' && typeof p.prompt_id === 'string' && p.prompt_id)
    // The text too: a prompt id that came back with another prompt is not the same delivery.
    return `UserPromptSubmit:${p.prompt_id}:${shortHash(p.prompt ?? '')}`;
  return null;
}

/** What `claudeDuplicate` reads of a Claude session's mapping state. */
export interface DeliveryView {
  main: StreamState;
  subagents: Record<string, SubagentStream>;
  seen?: string[];
}

/**
 * Whether `p` repeats a delivery already recorded in `st` (rules in the module comment): undefined when
 * it does not, else what identifies it for the note (`ident`; null: identical to the stream's previous
 * payload). `key` is `claudeDeliveryKey(p)`, `fp` its `fingerprint`. Call under the session's lock.
 */
export function claudeDuplicate(
  p: ClaudeDelivery & { agent_id?: string | undefined },
  st: DeliveryView,
  key: string | null,
  fp: string,
): { ident: string | null } | undefined {
  const sub = p.agent_id ? st.subagents[p.agent_id] : undefined;
  if (key) {
    // A call still waiting for its result is recorded even where the keys were not kept (older states).
    const waiting =
      p.hook_event_name === 'PreToolUse' && (sub ?? st.main).pending.some(([c]) => c === p.tool_use_id);
    if (!waiting && !st.seen?.includes(key)) return undefined;
    return {
      ident: key.startsWith('UserPromptSubmit:')
        ? `prompt_id ${p.prompt_id}`
        : `tool_use_id ${p.tool_use_id}`,
    };
  }
  const byAgent = { ident: `agent_id ${p.agent_id}` };
  // A subagent started again after it stopped is resumed, not repeated.
  if (p.hook_event_name === 'SubagentStart' && p.agent_id)
    return sub?.started && !sub.ended ? byAgent : undefined;
  if (p.hook_event_name === 'SubagentStop' && p.agent_id)
    return (sub ? sub.stopped : st.seen?.includes(subagentStopKey(p.agent_id))) ? byAgent : undefined;
  const stream = p.agent_id ? sub : st.main;
  return stream?.last !== undefined && stream.last === fp ? { ident: null } : undefined;
}

/** The key an unmatched SubagentStop records (it has no stream to say it stopped). */
export function subagentStopKey(agentId: string): string {
  return `SubagentStop:${agentId}`;
}

/** The key a PreToolUse of `callId` records (also recorded when a result had to write its call). */
export function preToolKey(callId: string): string {
  return `PreToolUse:${callId}`;
}

function toolEventKind(event: string): string {
  return event === 'PostToolUseFailure' ? 'PostToolUse' : event;
}

/**
 * The text of a duplicate's note: what was delivered again and what identifies it (`ident`, e.g.
 * "tool_use_id toolu_…"; null: identical to the stream's previous event). Never payload content.
 */
export function duplicateText(event: string, ident: string | null): string {
  return `${event} delivered again (${ident ?? 'identical to the event recorded before it'}): recorded once`;
}
