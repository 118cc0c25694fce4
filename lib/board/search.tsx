/**
 * Search on the board (issue 30 item 3; docs/search.md): the header's search box on every signed-in page
 * (`SearchBox`, a GET form to `/search`, so the query is in the address and it works without JavaScript),
 * and the results page `/search?q=&cursor=` (lib/http/routes/pages/search.tsx): each hit with its
 * session's title, state, type, who and when, the snippet with its matches in `<mark>`, linking to the
 * timeline row; the next page; a bad query said beside the box (400); a short help of the language when
 * there is no query; a page saying search is not set up (503). hono/jsx escapes HTML, and whatever a
 * writer wrote goes through `escapeControl` too (issue 8.4): a snippet is text, never markup.
 */
import type { SearchAnswer, SearchHit } from '../contract/search.js';
import { escapeControl } from '../log/format/escape.js';
import { When } from './components.js';
import { Layout, StateBadge } from './layout.js';
import { SEARCH_ERROR_ID, searchHref } from './search-box.js';

/** The query language in a few lines, with examples (docs/search.md has it all). */
export function SearchHelp() {
  const examples: [string, string][] = [
    ['billing migration', 'both words, anywhere in the same message, output, action, note or report'],
    ['"terraform apply"', 'the phrase, its words adjacent and in order'],
    ['parser -flaky', 'parser, but not flaky'],
    [
      'agent:codex person:priya',
      'what the agent codex did for priya (values of one filter are alternatives)',
    ],
    ['tool:bash "rm -rf"', 'actions of the bash tool whose input has the phrase'],
    ['type:note state:blocked', 'notes in sessions whose last report is blocked'],
    ['migration after:7d', 'from the last 7 days'],
    ['migration before:2026-12-01', 'before that day began (UTC)'],
  ];
  return (
    <section aria-labelledby="search-help-h">
      <h2 id="search-help-h">How to search</h2>
      <p class="search-lang">
        Words and <code>"quoted phrases"</code> must all match; <code>-word</code> must not. Filters:{' '}
        <code>agent:</code> <code>person:</code> <code>state:</code> <code>tool:</code> <code>type:</code>{' '}
        (message, output, action, note, correction, report) <code>session:</code> <code>after:</code>{' '}
        <code>before:</code> (a UTC day, an instant, or a span back from now: <code>7d</code>,{' '}
        <code>12h</code>). Case and punctuation do not matter: <code>billing_migration</code> is the phrase
        "billing migration".
      </p>
      <dl class="search-help">
        {examples.map(([q, what]) => (
          <>
            <dt>
              <a href={searchHref(q)}>
                <code>{q}</code>
              </a>
            </dt>
            <dd>{what}</dd>
          </>
        ))}
      </dl>
      <p class="muted">The whole language, and what is and is not searchable: docs/search.md.</p>
    </section>
  );
}

/** A hit's snippet: its text, the matched words in `<mark>` (text only: hono/jsx escapes it). */
function Snippet({ parts }: { parts: SearchHit['snippet'] }) {
  return (
    <p class="snippet">
      {parts.map((p) => (p.hit ? <mark>{escapeControl(p.text)}</mark> : escapeControl(p.text)))}
    </p>
  );
}

/** What a hit is, in a word or two: "message", "action (bash)", "correction" (the tool is a writer's: escaped). */
function typeWords(h: SearchHit): string {
  return h.tool && h.type === 'action' ? `action (${escapeControl(h.tool)})` : h.type;
}

/** An RFC 3339 ts as an ISO instant for `<time>`, or null when it is not one. */
function isoOf(ts: string): string | null {
  const t = Date.parse(ts);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/** One hit: the session's title linking to the row, then state, type, who, when, and the snippet. */
function Hit({ h, now }: { h: SearchHit; now: string }) {
  const iso = isoOf(h.ts);
  return (
    <li data-sid={h.sid} data-type={h.type}>
      <a class="hit-title" href={h.link}>
        {escapeControl(h.title ?? h.sid)}
      </a>
      <div class="hit-meta">
        <StateBadge state={h.state} />
        <span data-field="type">{typeWords(h)}</span>
        {h.agent ? <span data-field="agent">agent {escapeControl(h.agent)}</span> : null}
        {h.person ? <span data-field="person">person {escapeControl(h.person)}</span> : null}
        {iso ? <When iso={iso} now={now} /> : <span>{escapeControl(h.ts)}</span>}
        {h.corrected ? <span data-field="corrected">corrected</span> : null}
        <code class="hit-sid">{h.sid}</code>
      </div>
      <Snippet parts={h.snippet} />
    </li>
  );
}

/** What the results page shows: a query's answer, a refusal, or no query yet. */
export type SearchView =
  | { kind: 'help' }
  | { kind: 'hits'; q: string; answer: SearchAnswer; first: boolean }
  | { kind: 'bad'; q: string; message: string }
  | { kind: 'unavailable'; q: string; message: string };

/** How far behind ingest the index is, when worth saying (more than a few seconds). */
function LagNote({ answer }: { answer: SearchAnswer }) {
  const { pending, lag_seconds: lag } = answer;
  if ((pending === null || pending === 0) && (lag === null || lag < 10)) return null;
  return (
    <p class="muted" data-lag={Math.round(lag ?? 0)} data-pending={pending ?? ''}>
      {pending
        ? `${pending} change${pending === 1 ? ' is' : 's are'} still being indexed`
        : 'The index is behind'}
      {lag && lag >= 1 ? ` (the oldest ${Math.round(lag)} s ago)` : ''}: the newest lines, and the sessions of
      a rebuild, may not be found yet.
    </p>
  );
}

/** The results page (see the module's doc). */
export function SearchPage({ view, now }: { view: SearchView; now: string }) {
  const q = view.kind === 'help' ? '' : view.q;
  const title = q ? `search: ${escapeControl(q)}` : 'search';
  return (
    <Layout title={title} signedIn search={{ q, invalid: view.kind === 'bad' }}>
      {view.kind === 'help' ? <SearchHelp /> : null}
      {view.kind === 'bad' ? (
        <>
          <p class="error" id={SEARCH_ERROR_ID} role="alert">
            {escapeControl(view.message)}
          </p>
          <SearchHelp />
        </>
      ) : null}
      {view.kind === 'unavailable' ? (
        <p class="error" role="alert">
          {view.message}
        </p>
      ) : null}
      {view.kind === 'hits' ? <Results view={view} now={now} /> : null}
    </Layout>
  );
}

function Results({ view, now }: { view: Extract<SearchView, { kind: 'hits' }>; now: string }) {
  const { answer, q } = view;
  const n = answer.hits.length;
  return (
    <>
      <h2>{view.first ? 'Hits' : 'More hits'}</h2>
      <LagNote answer={answer} />
      {answer.session_only ? (
        <p class="muted">This sign-in searches session {answer.session_only} only.</p>
      ) : null}
      {n === 0 ? (
        <div class="empty">
          <p>No hits{view.first ? '' : ' on this page'}.</p>
          <p class="muted">
            Try fewer words, a word rather than a phrase, or fewer filters; a line ingested a moment ago may
            not be indexed yet. <a href="/search">How to search</a>.
          </p>
        </div>
      ) : (
        <>
          <p class="count muted">
            {n} hit{n === 1 ? '' : 's'}
            {answer.next_cursor ? ' on this page' : ''}, best first
          </p>
          <ol class="hits">
            {answer.hits.map((h) => (
              <Hit h={h} now={now} />
            ))}
          </ol>
        </>
      )}
      {answer.depth_limited ? (
        <p class="muted" data-depth-limited="">
          More hits exist past the deepest page a search reaches: narrow the query (more words, or filters
          such as <code>session:</code>, <code>type:</code>, <code>after:</code>).
        </p>
      ) : null}
      {answer.next_cursor || !view.first ? (
        <nav class="pages" aria-label="pages of hits">
          {view.first ? null : <a href={searchHref(q)}>First page</a>}
          {answer.next_cursor ? (
            <a href={searchHref(q, answer.next_cursor)} rel="next">
              Next page
            </a>
          ) : null}
        </nav>
      ) : null}
    </>
  );
}
