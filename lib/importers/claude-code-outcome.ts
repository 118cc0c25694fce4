/**
 * How a Claude Code tool call ended, from what Claude Code itself reports: one reading for the capture
 * hook (PostToolUse / PostToolUseFailure, lib/client/capture/claude-results.ts) and the importers (a transcript's
 * or stream-json's `tool_result` block with the record's `toolUseResult` / `tool_use_result`,
 * claude-code-records.ts), so every capture path records the same status and exit code for one call.
 * Here, below both sides (lib/client/capture may import lib/importers, never the reverse). docs/import.md and
 * docs/capture.md say which exit codes this records.
 *
 * What Claude Code's Bash tool reports (its BashTool and commandSemantics): a command whose exit Claude
 * Code reads as an error is a failed call (`is_error: true`, PostToolUseFailure) whose text starts with
 * `Exit code N`, then `[Request interrupted by user for tool use]` when it was interrupted, then stderr and
 * stdout. A command that finished and is no error answers `{stdout, stderr, interrupted, …}` with no exit
 * code: exit 0, unless Claude Code read a non-zero exit as no error (`grep`, `rg`, `find`, `diff`, `test`,
 * `[` exiting 1 say so in `returnCodeInterpretation`), the command went on in the background
 * (`backgroundTaskId`), or it was interrupted (`interrupted: true`).
 */
import type { ActionStatus } from '../log/format/events.js';
import { record, str } from './claude-code-task.js';

/** Claude Code's text for a tool call the person interrupted (its INTERRUPT_MESSAGE_FOR_TOOL_USE). */
export const INTERRUPTED_TOOL_USE = '[Request interrupted by user for tool use]';
/** Claude Code's text for a tool call the person refused. */
export const REJECTION_PREFIX = "The user doesn't want to proceed with this tool use";

/** What a capture path knows of one tool call's end. */
export interface ClaudeResultReport {
  /** the tool's name (`Bash`, `Read`, …); null when the call is not known */
  tool: string | null;
  /** Claude Code reported the call as failed: `is_error: true`, or the PostToolUseFailure event */
  failed: boolean;
  /** the failure's text (the `tool_result` content, the hook's `error`); null when none */
  text: string | null;
  /** the tool's structured result: the hook's `tool_response`, a record's `toolUseResult`; null when unknown */
  response: unknown;
  /** the hook's `is_interrupt` */
  interrupt?: boolean;
}

/** The status, error text and exit code a call's `agent.action_result` records. */
export interface ClaudeResultOutcome {
  status: ActionStatus;
  /** null when the call succeeded */
  error: string | null;
  /** the command's exit code when Claude Code's report says it; null otherwise */
  exitCode: number | null;
}

/**
 * The outcome of one Claude Code tool call (the table in docs/import.md "Exit codes"):
 * - failed: `cancelled` with no exit code when interrupted (`interrupt`, or the text's second line is
 *   Claude Code's interruption marker) or refused by the person; otherwise `error` with the exit code the
 *   structured result names or the text's first line `Exit code N` (an optional `Error: ` before it) says;
 * - not failed, the structured result `interrupted: true`: `cancelled`, no exit code;
 * - not failed, a structured `is_error` or non-zero `exit_code`/`exitCode`/`returnCode` (other tools): `error`;
 * - otherwise `ok`, exit code: the structured one, else 0 for a Bash call that finished in the foreground
 *   with no `returnCodeInterpretation` (`bashFinishedClean`), else none.
 * Pure; never throws.
 */
export function claudeResultOutcome(r: ClaudeResultReport): ClaudeResultOutcome {
  const obj = record(r.response);
  const code = obj ? (int(obj.exit_code) ?? int(obj.exitCode) ?? int(obj.returnCode)) : null;
  if (r.failed) {
    const text = r.text ?? 'the tool call failed';
    if (r.interrupt === true || isInterruptedText(text) || text.startsWith(REJECTION_PREFIX))
      return { status: 'cancelled', error: text, exitCode: null };
    return { status: 'error', error: text, exitCode: code ?? exitCodeOfText(text) };
  }
  if (obj?.interrupted === true) return { status: 'cancelled', error: 'interrupted', exitCode: null };
  if (obj?.is_error === true || (code !== null && code !== 0)) {
    const stderr = str(obj?.stderr);
    return { status: 'error', error: stderr ?? `exit code ${code ?? 'unknown'}`, exitCode: code };
  }
  return { status: 'ok', error: null, exitCode: code ?? (bashFinishedClean(r.tool, obj) ? 0 : null) };
}

/**
 * Whether a Bash result that is no failure says its command exited 0: Claude Code's Bash answer
 * (`stdout` a string) with no `returnCodeInterpretation` (a non-zero exit read as no error), no
 * `backgroundTaskId` and not backgrounded (the command had not ended), not interrupted.
 */
function bashFinishedClean(tool: string | null, obj: Record<string, unknown> | null): boolean {
  return (
    tool === 'Bash' &&
    obj !== null &&
    typeof obj.stdout === 'string' &&
    obj.interrupted !== true &&
    str(obj.returnCodeInterpretation) === null &&
    str(obj.backgroundTaskId) === null &&
    obj.backgroundedByUser !== true &&
    obj.assistantAutoBackgrounded !== true
  );
}

/** `Exit code N` as the text's first line (after an optional `Error: `): N; else null. */
export function exitCodeOfText(text: string): number | null {
  const m = /^(?:Error: )?Exit code (\d{1,3})(?:\r?\n|$)/.exec(text);
  return m ? Number(m[1]) : null;
}

/** The text is Claude Code's interruption: the marker itself, or `Exit code N` then the marker. */
function isInterruptedText(text: string): boolean {
  const lines = text.replace(/^Error: /, '').split('\n', 2);
  return (
    lines[0]!.startsWith(INTERRUPTED_TOOL_USE) ||
    (exitCodeOfText(text) !== null && lines[1]?.trimEnd() === INTERRUPTED_TOOL_USE)
  );
}

function int(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) ? v : null;
}
