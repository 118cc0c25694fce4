/**
 * The words both search engines match (issue 30): text is cut into terms here, once, so SQLite FTS5 and
 * PostgreSQL find the same documents for the same query. A term is a run of letters and digits
 * (`\p{L}\p{M}\p{N}`) in NFKC, lower-cased, at most `TERM_MAX` characters; everything else separates terms
 * (so `billing_migration`, `billing-migration` and `billing/migration` are the words `billing migration`,
 * and a query for `billing_migration` is the phrase of those two). The engines are given the terms joined
 * by single spaces: FTS5's `unicode61` tokenizer and PostgreSQL's `simple` configuration each read that
 * back as the same list, in the same positions (phrases match adjacent positions in both).
 */

/** Longest term kept, in characters; a longer run of letters is cut (an id, a hash, a base64 blob). */
export const TERM_MAX = 64;

const SEPARATORS = /[^\p{L}\p{M}\p{N}]+/u;

/**
 * The terms of `text`, in order (duplicates kept: phrases need positions).
 * @example termsOf('Run `terraform apply` on billing_migration') → ['run','terraform','apply','on','billing','migration']
 */
export function termsOf(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.normalize('NFKC').toLowerCase().split(SEPARATORS)) {
    if (!raw) continue;
    // Combining marks alone (a separator run then a mark) are not a word.
    if (!/[\p{L}\p{N}]/u.test(raw)) continue;
    out.push(raw.length > TERM_MAX ? Array.from(raw).slice(0, TERM_MAX).join('') : raw);
  }
  return out;
}

/**
 * The `terms` column of a document: the terms of each part joined by spaces, parts in order (its text
 * first, then its tool, agent and person names, so a bare `priya` finds Priya's messages).
 */
export function termsColumn(...parts: Array<string | null | undefined>): string {
  return parts
    .filter((p): p is string => typeof p === 'string' && p.length > 0)
    .flatMap(termsOf)
    .join(' ');
}
