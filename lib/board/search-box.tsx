/**
 * The header's search box of every signed-in board page (issue 30 item 3, ./search.tsx has the results
 * page): a GET form to `/search`, so the query is in the address and it works without JavaScript. Kept
 * apart from the results page so that the layout, which draws it, and that page, which the layout frames,
 * do not import each other.
 */
import { MAX_QUERY_CHARS } from '../contract/search.js';
import { uriComponent } from '../log/format/text-cut.js';

/** The id of the header box's input (its label's `for`, the error message's `aria-describedby`). */
export const SEARCH_INPUT_ID = 'search-q';
/** The id of the message a bad query shows beside the box. */
export const SEARCH_ERROR_ID = 'search-error';

/** The search box's and results' CSS, appended to the board's stylesheet (./styles.ts) by the layout. */
export const SEARCH_CSS = `
search.search-box { flex: 1 1 16rem; max-width: 28rem; min-width: 0; margin: 0 0 .4rem; }
search.search-box form { display: flex; gap: .3rem; align-items: center; }
search.search-box input { flex: 1 1 auto; min-width: 0; color: var(--fg); background: var(--bg); border: 1px solid var(--muted); border-radius: 4px; padding: .25rem .4rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
ol.hits { list-style: none; padding: 0; margin: 0; } ol.hits > li { border-bottom: 1px solid var(--line); padding: .6rem 0; overflow-wrap: anywhere; }
ol.hits a.hit-title { font-weight: 600; } ol.hits .hit-meta { font-size: .85rem; color: var(--muted); display: flex; flex-wrap: wrap; gap: .1rem .8rem; margin: .15rem 0; }
p.snippet { margin: .2rem 0 0; white-space: pre-wrap; overflow-wrap: anywhere; }
p.snippet mark { background: #fde68a; color: #111827; border-radius: 2px; padding: 0 .1rem; }
@media (prefers-color-scheme: dark) { p.snippet mark { background: #854d0e; color: #fef9c3; } }
p.search-lang code { white-space: nowrap; }
dl.search-help { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .2rem 1rem; } dl.search-help dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 700px) { search.search-box { flex-basis: 100%; max-width: none; } dl.search-help { grid-template-columns: minmax(0, 1fr); } dl.search-help dd { margin: 0 0 .4rem .8rem; } }
`;

/**
 * The header's search box: a `search` landmark holding the form `GET /search?q=`, a labelled input
 * (the label hidden, the button says "Search" too) that keeps the query being shown.
 * @param q the query of the page (the results page), else empty
 * @param invalid the query was refused: the input says so and points at the message
 */
export function SearchBox({ q, invalid }: { q?: string; invalid?: boolean }) {
  return (
    <search class="search-box" aria-label="Search">
      <form method="get" action="/search">
        <label class="visually-hidden" for={SEARCH_INPUT_ID}>
          Search sessions
        </label>
        <input
          id={SEARCH_INPUT_ID}
          type="search"
          name="q"
          value={q ?? ''}
          maxlength={MAX_QUERY_CHARS}
          placeholder='words, "a phrase", agent:codex'
          autocomplete="off"
          {...(invalid ? { 'aria-invalid': 'true', 'aria-describedby': SEARCH_ERROR_ID } : {})}
        />
        <button type="submit">Search</button>
      </form>
    </search>
  );
}

/** The board's search page address for `q` (and the page after `cursor`). */
export function searchHref(q: string, cursor?: string | null): string {
  return `/search?q=${uriComponent(q)}${cursor ? `&cursor=${uriComponent(cursor)}` : ''}`;
}
