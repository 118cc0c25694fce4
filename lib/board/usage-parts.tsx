/**
 * How the board writes token usage and list-price cost (issue 27 item 3, docs/usage.md): compact token
 * counts, dollars to the cent or to four places when small, and unknown said as unknown, never as 0.
 */
import type { RowUsage } from '../service/timeline/schemas.js';

/** A token count as the board writes it: `950`, `22.2k`, `3.41M`. */
export function tokens(n: number): string {
  if (Math.abs(n) < 1000) return String(n);
  if (Math.abs(n) < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(2)}M`;
}

/** Dollars: `$12.34`, `$0.0696` under a dollar, `unknown` for null. */
export function usd(v: number | null): string {
  if (v === null) return 'unknown';
  if (v !== 0 && Math.abs(v) < 1) return `$${v.toFixed(4)}`;
  return `$${v.toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** The one-line figures of a usage: `22.2k in (16.0k cached) · 5 out · $0.0696`. */
export function usageLine(u: {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cost_usd: number | null;
}): string {
  const cached = u.cache_read_tokens > 0 ? ` (${tokens(u.cache_read_tokens)} cached)` : '';
  return `${tokens(u.input_tokens)} in${cached} · ${tokens(u.output_tokens)} out · ${usd(u.cost_usd)}`;
}

/** The title (tooltip) that says what a cost is. */
export const COST_TITLE =
  'list price equivalent: what these tokens cost at the provider’s published API price on the day (@pydantic/genai-prices); subscriptions are billed otherwise';

/** A turn's or a record's usage, as a small line of the timeline; "usage unknown" when none was recorded. */
export function UsageNote({ usage, what }: { usage: RowUsage | null; what: string }) {
  if (usage === null)
    return (
      <p class="usage unknown" data-usage="unknown">
        {what}: usage unknown (no source reported it)
      </p>
    );
  if (usage.records === 0 && usage.input_tokens === 0 && usage.output_tokens === 0)
    return (
      <p class="usage" data-usage="reported">
        {what}: no tokens
        {usage.reported_cost_usd === null
          ? ''
          : `; the vendor reported ${usd(usage.reported_cost_usd)} itself (kept beside the list price, never added to it)`}
      </p>
    );
  const replaced = usage.records === 0 ? ' (replaces an earlier record of the same message)' : '';
  const models = usage.models.length > 0 ? ` (${usage.models.join(', ')})` : '';
  return (
    <p class="usage" data-usage={usage.cost_usd ?? 'unpriced'} title={COST_TITLE}>
      {what}: {usageLine(usage)}
      {models}
      {replaced}
      {usage.unpriced_records > 0 ? `, ${usage.unpriced_records} without a list price` : ''}
    </p>
  );
}
