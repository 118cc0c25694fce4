/**
 * Capture as it happens (issue 11, docs/capture.md): the Claude Code and Codex hooks, their local spool
 * and the shipper. The state directory's layout (`state-dir.ts`) is shared with `hansard doctor` and
 * `hansard integrations sync`.
 */
export { applyClaudeEvent, ClaudeHookPayload, type ClaudeState, resultOf } from './claude-code.js';
export { applyCodexEvent, CodexNotifyPayload, type CodexState } from './codex.js';
export { HOOK_BUDGET_MS, runClaudeHook, runCodexHook } from './hook.js';
export { runShipper, type ShipReport, shipSpool } from './ship.js';
export { shipperRunning, spawnShipper } from './spawn.js';
export * from './state-dir.js';
