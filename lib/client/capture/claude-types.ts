/**
 * A Claude Code hook's payload and a writer's mapping state between hook processes: below
 * ./claude-code.ts (which maps payloads onto events and re-exports these), ./claude-results.ts and
 * ./deliveries.ts, so that neither of those imports a type back from claude-code.ts.
 */
import { z } from 'zod';

/** A hook payload: only `hook_event_name` and `session_id` are needed; everything else is optional. */
export const ClaudeHookPayload = z.looseObject({
  session_id: z.string().min(1),
  hook_event_name: z.string().min(1),
  cwd: z.string().optional(),
  prompt: z.string().optional(),
  tool_name: z.string().optional(),
  tool_input: z.unknown().optional(),
  tool_response: z.unknown().optional(),
  tool_use_id: z.string().optional(),
  last_assistant_message: z.string().optional(),
  message: z.string().optional(),
  error: z.string().optional(),
  agent_id: z.string().optional(),
  trigger: z.string().optional(),
  custom_instructions: z.string().nullish(),
  reason: z.string().optional(),
  source: z.string().optional(),
  notification_type: z.string().optional(),
  is_interrupt: z.boolean().optional(),
});
export type ClaudeHookPayload = z.infer<typeof ClaudeHookPayload>;

/** One writer's mapping state between hook processes. */
export interface StreamState {
  w: string;
  turnId: string | null;
  /** call id → action id of actions without a result yet, in call order */
  pending: [string, string][];
  ended: boolean;
  /** fingerprint of the last payload recorded on this stream (`deliveries.ts`) */
  last?: string;
}

/** A subagent's stream. */
export interface SubagentStream extends StreamState {
  parentActionId: string | null;
  /** `agent_type` as the subagent's first payload gave it */
  type?: string | null;
  /** a SubagentStart was recorded for it (a second one while it runs is a duplicate) */
  started?: boolean;
  /** a SubagentStop ended it (a second one is a duplicate) */
  stopped?: boolean;
}
