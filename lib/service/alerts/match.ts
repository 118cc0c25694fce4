/**
 * Which targets an event goes to (issue 28 item 2): a target's rule names the kinds it wants (none: all)
 * and the agents whose sessions it wants (none: any). A test event goes only to the target it was sent
 * for, and no other event goes to a target that did not ask (`only_target`).
 */
import { type AlertKind, TEST_KIND } from '../../contract/alerts.js';
import type { AlertTarget, OutboxEvent } from '../../store/index.js';

/** Whether `target` gets `event` (its `agents` filled in with the session's agents when a rule names some). */
export function matches(
  target: AlertTarget,
  event: Pick<OutboxEvent, 'kind' | 'only_target' | 'sid' | 'agents'>,
): boolean {
  if (event.only_target !== null) return event.only_target === target.id;
  if (event.kind === TEST_KIND) return false;
  if (target.events.length > 0 && !target.events.includes(event.kind as AlertKind)) return false;
  if (target.agents.length === 0) return true;
  // A rule about some agents' sessions: tenant-wide events (quota, budget) are about no agent.
  return event.sid !== null && event.agents.some((a) => target.agents.includes(a));
}
