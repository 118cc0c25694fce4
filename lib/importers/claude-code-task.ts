/**
 * What a Claude Code Task/Agent call and its result say about the subagent they launch (issue 25 item 3):
 * read by the importer (lib/importers/claude-code-links.ts) and by the capture hook
 * (lib/client/capture/subagents.ts) alike, so both tie a subagent to its call on the same facts. Here, below
 * both sides (lib/client/capture may import lib/importers, never the reverse).
 */

/** What a waiting Task/Agent call says about the subagent it launches. */
export interface TaskInfo {
  /** `tool_input.subagent_type`, null when the call names none */
  type: string | null;
  /** `tool_input.description` */
  description: string | null;
  /** the subagent's id, once the call's result named it (`agentId`, a background launch) */
  agentId: string | null;
}

/** The `TaskInfo` of a call's `tool_input` (its `agentId` is not known yet: null). */
export function taskInfoOf(input: unknown): TaskInfo {
  const o = record(input);
  return { type: str(o?.subagent_type), description: str(o?.description), agentId: null };
}

/** The subagent id a Task/Agent result names (`agentId`, or `agent_id`), or null. */
export function agentIdOfResponse(response: unknown): string | null {
  const o = record(response);
  return str(o?.agentId) ?? str(o?.agent_id);
}

/** `v` when it is a plain object, else null. */
export function record(v: unknown): Record<string, unknown> | null {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

/** `v` when it is a string with something besides blanks, else null. */
export function str(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v : null;
}
