/**
 * Which Task/Agent call launched a subagent (issue 25 item 3). Claude Code's SubagentStart names the
 * subagent (`agent_id`) and its type (`agent_type`), never the call that launched it; the call's
 * PreToolUse names the type it asks for (`tool_input.subagent_type`) and a `description`; a background
 * launch's result names the subagent's id (`agentId`). A subagent is linked to a waiting call only on
 * what ties them, never on the order the hooks arrive in (a SubagentStop of some other agent, with an
 * empty type, arriving between two SubagentStarts once took the waiting call and left the real subagent
 * without a parent):
 *
 * 1. its id: the call whose result named `agentId` = the subagent's `agent_id`;
 * 2. its type: the oldest waiting call asking for the same type (case aside), then the oldest asking for
 *    none (Claude Code picks the default type then); when both the payload and the call give a
 *    `description`, they must be equal too. An empty type ties to nothing.
 *
 * Otherwise the subagent has no parent (`parent_action_id: null`), and a SubagentStop of a subagent
 * this session never saw start takes no call at all (`claude-code.ts` keeps it as a marked note).
 */

import { str, type TaskInfo, taskInfoOf } from '../../importers/claude-code-task.js';

export { agentIdOfResponse, type TaskInfo, taskInfoOf } from '../../importers/claude-code-task.js';

/** The part of the mapping state that holds the waiting calls. */
export interface TaskTable {
  /** main-writer Task/Agent calls not linked to a subagent yet: [call id, action id], launch order */
  tasks: [string, string][];
  /** what each of those calls says (call id → info); absent in states written before issue 25 */
  taskInfo?: Record<string, TaskInfo>;
}

/** What identifies a subagent in a hook payload. */
export interface SubagentIdentity {
  agentId: string | null;
  agentType: string | null;
  description: string | null;
}

/** Records a waiting call (its PreToolUse). */
export function addTask(t: TaskTable, callId: string, actionId: string, input: unknown): void {
  t.tasks.push([callId, actionId]);
  t.taskInfo = { ...t.taskInfo, [callId]: taskInfoOf(input) };
}

/** The call stops waiting (its result arrived and it launched nothing that runs on). */
export function dropTask(t: TaskTable, callId: string): void {
  t.tasks = t.tasks.filter(([c]) => c !== callId);
  if (t.taskInfo && callId in t.taskInfo) {
    const { [callId]: _gone, ...rest } = t.taskInfo;
    t.taskInfo = rest;
  }
}

/** A waiting call's result named the subagent it launched: a later SubagentStart ties by that id. */
export function setTaskAgent(t: TaskTable, callId: string, agentId: string): void {
  const info = t.taskInfo?.[callId];
  if (t.tasks.some(([c]) => c === callId))
    t.taskInfo = { ...t.taskInfo, [callId]: { ...(info ?? taskInfoOf(null)), agentId } };
}

/**
 * Takes the waiting call `who` is tied to (rules in the module comment) out of `t`; returns its action
 * id, or null when nothing ties. `byIdOnly`: only an id ties (a stop of a subagent never seen starting).
 */
export function claimTask(t: TaskTable, who: SubagentIdentity, byIdOnly = false): string | null {
  const info = (c: string): TaskInfo => t.taskInfo?.[c] ?? { type: null, description: null, agentId: null };
  let hit = who.agentId ? t.tasks.find(([c]) => info(c).agentId === who.agentId) : undefined;
  const type = who.agentType?.trim().toLowerCase();
  if (!hit && !byIdOnly && type) {
    const fits = (c: string) =>
      info(c).agentId === null &&
      (who.description === null || info(c).description === null || info(c).description === who.description);
    hit =
      t.tasks.find(([c]) => fits(c) && info(c).type?.trim().toLowerCase() === type) ??
      t.tasks.find(([c]) => fits(c) && info(c).type === null);
  }
  if (!hit) return null;
  dropTask(t, hit[0]);
  return hit[1];
}

/** The identity a payload gives (`agent_id`, `agent_type`, `description`; empty strings as null). */
export function identityOf(p: Record<string, unknown>): SubagentIdentity {
  return { agentId: str(p.agent_id), agentType: str(p.agent_type), description: str(p.description) };
}

/** A waiting call's result named `agentId` as the subagent it launched. */
export function tiedById(t: TaskTable, agentId: string): boolean {
  return t.tasks.some(([c]) => t.taskInfo?.[c]?.agentId === agentId);
}

/**
 * A SubagentStop without `agent_id`: the key of the one running subagent of its (non-empty) type, or
 * undefined when none or several run (nothing then says which stopped).
 */
export function onlyOpenOfType(
  subagents: Record<string, { ended: boolean; type?: string | null }>,
  type: unknown,
): string | undefined {
  if (typeof type !== 'string' || type.trim() === '') return undefined;
  const want = type.trim().toLowerCase();
  const open = Object.keys(subagents).filter((k) => {
    const s = subagents[k]!;
    return !s.ended && s.type?.trim().toLowerCase() === want;
  });
  return open.length === 1 ? open[0] : undefined;
}
