/**
 * The `token_usage` note: how a writer records the token usage a source reported (issue 27, docs/usage.md).
 * A `note` whose `extra.import_kind` is `token_usage` and whose `extra.usage_source` says which source's
 * figures `extra` holds, as that source wrote them (never summed, never converted): the rules that turn
 * them into counts live in lib/log/analyse/usage/, so `hansard usage --recompute` can apply new rules to
 * old records.
 *
 * | `usage_source` | written by | `extra` holds |
 * |---|---|---|
 * | `claude_message` | Claude Code transcript import, stream-json import, capture hook | `message_id`, `model`, `usage` (the assistant message's `usage` object as recorded), `request_id?`, `cost_usd?` (the record's own `costUSD`), `usage_from?` (`message_delta`: stream-json's final usage laid over the record's) |
 * | `claude_result` | stream-json import (`result` record) | `total_cost_usd`, `usage`, `modelUsage`, … (a run's own report: a reported cost, never counted as tokens) |
 * | `codex_total` | Codex rollout import (`token_count`, `token_usage_record`), `codex exec --json` import (`turn.completed`) | `thread_token_usage` (the thread's running total), `usage?` / `last_token_usage?` (one response's), `model?` |
 * | `hcn` | hcn stream import (`usage` event, seed 002) | `scope`, `model?`, `inputTokens?`, `outputTokens?`, `cacheReadTokens?`, `cacheWriteTokens?`, `reasoningTokens?`, `totalTokens?`, `costUsd?`, `inputIncludesCache?`, `callId?`, `harness?` |
 *
 * Records written before `usage_source` existed are recognised by their older keys (`claude_type`,
 * `codex_type`, `hcn_kind`): `usageSourceOf`.
 */

/** The `extra.import_kind` of a usage note (lib/importers/mapping.ts `ImportKind`). */
export const USAGE_NOTE_KIND = 'token_usage';

/** Which source's figures a usage note holds. */
export const USAGE_SOURCES = ['claude_message', 'claude_result', 'codex_total', 'hcn'] as const;
export type UsageSource = (typeof USAGE_SOURCES)[number];

/**
 * The source of a note's usage figures, or null when the note is not a usage note (or of a source this
 * build does not know). Reads `extra.usage_source`, else the older keys of the same records.
 */
export function usageSourceOf(extra: Record<string, unknown>): UsageSource | null {
  if (extra.import_kind !== USAGE_NOTE_KIND) return null;
  const s = extra.usage_source;
  if (typeof s === 'string')
    return (USAGE_SOURCES as readonly string[]).includes(s) ? (s as UsageSource) : null;
  if (extra.claude_type === 'result') return 'claude_result';
  if (extra.codex_type === 'token_usage' || extra.codex_type === 'turn.completed') return 'codex_total';
  if (extra.hcn_kind === 'usage') return 'hcn';
  return null;
}
