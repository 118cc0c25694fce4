/**
 * The board's overview (issue 14.1, 14.4): every session urgent first, as `getOverview` answers it
 * (lib/service/board/overview-schemas.ts), server-rendered so it reads without JavaScript. A summary of each
 * group's count, a GET form of filters (state, agent, person, free text: the filter lives in the URL),
 * the groups in order, and links to the other pages that keep the filters. The same page, with one filter
 * fixed by its path, is a person's (`/people/{user_id}`) or an agent's (`/agents/{agent}`) view.
 *
 * `OverviewRegion` is what `<main id="overview">` holds: the page renders it, and so do the live updates
 * (`GET /board/events` sends it as an SSE event, `GET /board/fragment` answers it to the poll).
 */

import { STATES } from '../contract/status.js';
import { escapeControl } from '../log/format/escape.js';
import type {
  Overview,
  OverviewFilters,
  OverviewGroup,
  OverviewRow,
  RowUsageSummary,
} from '../service/board/overview-schemas.js';
import {
  age,
  agentHref,
  NameLinks,
  personHref,
  RowTitle,
  sessionHref,
  Verdicts,
  When,
  WorkLine,
} from './components.js';
import { Layout, type LiveMode, StateBadge } from './layout.js';
import { lookAlikeText, type NameMarks, type OverviewView, overviewMarks, ViewNameMark } from './names.js';
import { COST_TITLE, tokens, usd } from './usage-parts.js';

export type { OverviewView } from './names.js';

/** The group headings, in the board's words. */
const GROUP_LABEL: Record<OverviewGroup, string> = {
  blocked: 'Blocked',
  needs_review: 'Needs review',
  working: 'Working',
  done_recently: 'Done recently',
  rest: 'Everything else',
  no_segments: 'No segments yet',
};

/** The state filter a group's count links to; a group that is no one state links to its place instead. */
const GROUP_STATE: Partial<Record<OverviewGroup, OverviewFilters['state']>> = {
  blocked: 'blocked',
  needs_review: 'needs_review',
  working: 'working',
  done_recently: 'done',
};

/** The path of a view (the form's action, the links' base). */
export function viewPath(view: OverviewView): string {
  if (view.kind === 'person') return personHref(view.id);
  if (view.kind === 'agent') return agentHref(view.id);
  return '/';
}

/**
 * The query string (with its `?`, or empty) of `filters`, `page` and `limit`, in a fixed order: what
 * links, the SSE and the poll URLs carry. Empty and absent values are left out; page 1 is.
 */
export function overviewQuery(filters: OverviewFilters, page = 1, limit?: number): string {
  const q = new URLSearchParams();
  for (const key of ['state', 'agent', 'person', 'q'] as const) {
    const v = filters[key];
    if (v !== undefined && v !== '') q.set(key, v);
  }
  if (page > 1) q.set('page', String(page));
  if (limit !== undefined) q.set('limit', String(limit));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The filters of the URL: the page's own, without the one its path fixes. */
function ownFilters(filters: OverviewFilters, view: OverviewView): OverviewFilters {
  const own = { ...filters };
  if (view.kind === 'person') delete own.person;
  if (view.kind === 'agent') delete own.agent;
  return own;
}

/** How many sessions, as a phrase: `1 session`, `312 sessions`. */
function sessionsPhrase(n: number): string {
  return `${n.toLocaleString('en')} session${n === 1 ? '' : 's'}`;
}

/**
 * One select of the filter form: `options` as given, the current value selected. A state's words are
 * spaced (`needs review`); a name is shown as written, with its look-alike mark (`marks`) if it has one,
 * so two options never read the same.
 */
function Select(props: {
  name: string;
  label: string;
  any: string;
  value?: string | undefined;
  options: readonly string[];
  marks?: NameMarks['agents'];
}) {
  return (
    <label>
      {props.label}
      <select name={props.name}>
        <option value="">{props.any}</option>
        {props.options.map((o) => (
          <option value={o} selected={o === props.value}>
            {props.name === 'state'
              ? o.replace('_', ' ')
              : `${escapeControl(o)}${lookAlikeText(props.marks?.get(o))}`}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The filters, a GET form (works without JavaScript; the result's URL can be shared). */
function FilterForm({ overview, view }: { overview: Overview; view: OverviewView }) {
  const f = overview.filters;
  const marks = overviewMarks(overview, view);
  const with_ = (list: readonly string[], v: string | undefined) =>
    v && !list.includes(v) ? [...list, v] : list;
  return (
    <search aria-label="Filter sessions">
      <form class="filters" method="get" action={viewPath(view)}>
        <Select name="state" label="State" any="any state" value={f.state} options={[...STATES, 'none']} />
        {view.kind === 'agent' ? null : (
          <Select
            name="agent"
            label="Agent"
            any="any agent"
            value={f.agent}
            options={with_(overview.facets.agents, f.agent)}
            marks={marks.agents}
          />
        )}
        {view.kind === 'person' ? null : (
          <Select
            name="person"
            label="Person"
            any="anyone"
            value={f.person}
            options={with_(overview.facets.people, f.person)}
            marks={marks.people}
          />
        )}
        <label>
          Text
          <input
            type="search"
            name="q"
            value={f.q ?? ''}
            maxlength={200}
            placeholder="title, note, id, name"
          />
        </label>
        <button type="submit">Filter</button>
        {Object.keys(ownFilters(f, view)).length ? <a href={viewPath(view)}>Clear filters</a> : null}
      </form>
    </search>
  );
}

/** Each group's count among the matching sessions, each a link to those sessions. */
function Summary({ overview, view }: { overview: Overview; view: OverviewView }) {
  const own = ownFilters(overview.filters, view);
  return (
    <nav aria-label="Groups">
      <ul class="summary">
        {overview.groups.map(({ group, count }) => {
          const state = GROUP_STATE[group];
          const href = state ? `${viewPath(view)}${overviewQuery({ ...own, state })}` : `#group-${group}`;
          return (
            <li data-group={group}>
              <a href={href}>
                {GROUP_LABEL[group]} <strong>{count.toLocaleString('en')}</strong>
              </a>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}

/** One session's row (see the module's doc for what each cell shows). */
function Row({ s, now, view, marks }: { s: OverviewRow; now: string; view: OverviewView; marks: NameMarks }) {
  const person = view.kind === 'person' ? view.id : undefined;
  const since = s.state_since ?? s.reported_at;
  return (
    <tr data-sid={s.sid}>
      <td data-label="Session">
        <RowTitle s={s} person={person} href={sessionHref(s.sid, person)} />
      </td>
      <td data-label="Who">
        <NameLinks
          names={s.agents}
          href={agentHref}
          label="agents"
          none="no writer yet"
          marks={marks.agents}
        />
        <NameLinks names={s.people} href={personHref} label="people" none="" marks={marks.people} />
      </td>
      <td data-label="State">
        {/* A blocked row says since when beside its reason; the badge need not say it twice. */}
        <StateBadge
          state={s.state}
          age={s.state && since && s.group !== 'blocked' ? age(since, now) : null}
        />
      </td>
      <td data-label="Note">
        {s.group === 'blocked' && since ? (
          <div class="reason">
            <strong>
              Blocked since <When iso={since} now={now} />
            </strong>
            {s.note ? `: ${escapeControl(s.note)}` : ''}
          </div>
        ) : (
          escapeControl(s.note ?? '')
        )}
        <Verdicts evidence={s.evidence} />
        {s.work.map((w) => (
          <WorkLine w={w} />
        ))}
      </td>
      <td data-label="Cost" class="cost">
        <RowCost u={s.usage} />
      </td>
      <td data-label="Last update">
        <When iso={s.last_activity} now={now} />
      </td>
    </tr>
  );
}

/** "1 turn" / "3 turns". */
function turnsPhrase(n: number): string {
  return `${n.toLocaleString('en')} turn${n === 1 ? '' : 's'}`;
}

/** The figures of a usage summary: tokens when some were reported, "no usage reported" when none was. */
function Figures({ u }: { u: RowUsageSummary }) {
  const reported = u.turns - u.unknown_turns > 0 || u.input_tokens > 0 || u.output_tokens > 0;
  return (
    <>
      <strong>{usd(u.cost_usd)}</strong>
      {reported ? ` · ${tokens(u.input_tokens)} in · ${tokens(u.output_tokens)} out` : ' · no usage reported'}
      {u.unknown_turns > 0 && reported ? ` · ${turnsPhrase(u.unknown_turns)} unknown` : ''}
      {u.unpriced_records > 0 ? ` · ${u.unpriced_records.toLocaleString('en')} without a list price` : ''}
    </>
  );
}

/** A row's cost and tokens; "none recorded" when the session has no usage, "unknown" when not priced. */
function RowCost({ u }: { u: OverviewRow['usage'] }) {
  if (u === null) return <span class="muted">none recorded</span>;
  const reported = u.turns - u.unknown_turns > 0 || u.input_tokens > 0 || u.output_tokens > 0;
  return (
    <span data-cost={u.cost_usd ?? 'unknown'}>
      <strong>{usd(u.cost_usd)}</strong>
      <br />
      <span class="muted">
        {reported ? `${tokens(u.input_tokens)} in · ${tokens(u.output_tokens)} out` : 'no usage reported'}
      </span>
      {u.unknown_turns > 0 && reported ? (
        <>
          <br />
          <span class="muted" title="turns no source reported usage for: the figures are a lower bound">
            {u.unknown_turns} of {turnsPhrase(u.turns)} unknown
          </span>
        </>
      ) : null}
    </span>
  );
}

/**
 * Today's and this month's cost of the view (tenant, person or agent; dated by when the tokens were used),
 * and the tenant's monthly budget.
 */
function UsageBand({ usage, view }: { usage: Overview['usage']; view: OverviewView }) {
  if (!usage) return null;
  const whose = view.kind === 'all' ? '' : view.kind === 'person' ? 'this person' : 'this agent';
  const b = usage.budget;
  const state = b?.crossed.includes(100) ? 'fail' : b?.crossed.includes(80) ? 'warn' : '';
  return (
    <section class="usage-band" aria-label="Usage and cost" title={COST_TITLE}>
      <span data-usage="today">
        Today{whose ? ` (${whose})` : ''}: <Figures u={usage.today} />
      </span>
      <span data-usage="month">
        This month{whose ? ` (${whose})` : ''}: <Figures u={usage.month} />
      </span>
      {b ? (
        <span data-budget={b.percent} class={state}>
          {whose ? 'Tenant budget' : 'Budget'}: {usd(b.month_cost_usd)} of {usd(b.monthly_usd)} ({b.percent}{' '}
          %)
          {state === 'fail' ? ' — over budget' : state === 'warn' ? ' — past 80 %' : ''}
          {b.unpriced_records > 0
            ? `, not counting ${b.unpriced_records.toLocaleString('en')} records without a list price`
            : ''}
        </span>
      ) : null}
      <span class="muted">list price equivalent, {usage.price_data}</span>
    </section>
  );
}

/** A group's rows under its heading. */
function Group({
  group,
  rows,
  now,
  view,
  marks,
}: {
  group: OverviewGroup;
  rows: OverviewRow[];
  now: string;
  view: OverviewView;
  marks: NameMarks;
}) {
  return (
    <section id={`group-${group}`} class="group" aria-label={GROUP_LABEL[group]}>
      <h2>{GROUP_LABEL[group]}</h2>
      {group === 'no_segments' ? (
        <p class="muted">
          An agent reported on these sessions, but nothing of them was uploaded. A report may come first; a
          mistyped session id looks the same.
        </p>
      ) : null}
      <table class="overview">
        <colgroup>
          <col class="c-session" />
          <col class="c-who" />
          <col class="c-state" />
          <col class="c-note" />
          <col class="c-cost" />
          <col class="c-last" />
        </colgroup>
        <thead>
          <tr>
            <th scope="col">Session</th>
            <th scope="col">Agents and people</th>
            <th scope="col">State</th>
            <th scope="col">Note</th>
            <th scope="col" title={COST_TITLE}>
              Cost
            </th>
            <th scope="col" title="the last chunk, status report or work change the server received">
              Last update
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <Row s={s} now={now} view={view} marks={marks} />
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** Links to the first, previous and next pages, keeping the filters and `limit`. */
function Pages({
  overview,
  view,
  limit,
}: {
  overview: Overview;
  view: OverviewView;
  limit?: number | undefined;
}) {
  const { page, pages } = overview;
  if (pages <= 1 && page <= 1) return null;
  const own = ownFilters(overview.filters, view);
  const href = (p: number) => `${viewPath(view)}${overviewQuery(own, p, limit)}`;
  return (
    <nav class="pages" aria-label="Pages">
      {page > 1 ? <a href={href(1)}>First page</a> : null}
      {page > 1 && page - 1 <= pages ? (
        <a href={href(page - 1)} rel="prev">
          Previous page
        </a>
      ) : null}
      <span>
        Page {page} of {pages}
      </span>
      {page < pages ? (
        <a href={href(page + 1)} rel="next">
          Next page
        </a>
      ) : null}
    </nav>
  );
}

/** What `<main id="overview">` holds; re-rendered by the live updates. */
export function OverviewRegion({
  overview,
  view,
  limit,
}: {
  overview: Overview;
  view: OverviewView;
  limit?: number | undefined;
}) {
  const o = overview;
  const marks = overviewMarks(o, view);
  const filtered = Object.keys(ownFilters(o.filters, view)).length > 0 || view.kind !== 'all';
  const byGroup = new Map<OverviewGroup, OverviewRow[]>();
  for (const r of o.rows) byGroup.set(r.group, [...(byGroup.get(r.group) ?? []), r]);
  return (
    <>
      <p class="count">
        <strong>{sessionsPhrase(o.total)}</strong>
        {filtered ? `, ${o.matched.toLocaleString('en')} matching` : null}
        {o.rows.length > 0 && o.rows.length < o.matched
          ? `, ${o.rows.length.toLocaleString('en')} on this page`
          : null}
      </p>
      <UsageBand usage={o.usage} view={view} />
      <Summary overview={o} view={view} />
      {o.rows.length === 0 ? (
        <div class="empty">
          {o.page > 1 ? (
            <p>
              No sessions on this page. Back to the <a href={viewPath(view)}>first page</a>.
            </p>
          ) : o.total > 0 ? (
            <p>
              No session matches. <a href={viewPath(view)}>Show all</a>.
            </p>
          ) : (
            <>
              <p>No sessions yet.</p>
              <p>
                Record one with the library or <code>hansard import claude-code TRANSCRIPT.jsonl</code>, then
                send it with <code>hansard upload ./sessions/s_…</code>. It shows here as soon as it arrives.
              </p>
            </>
          )}
        </div>
      ) : (
        [...byGroup].map(([group, rows]) => (
          <Group group={group} rows={rows} now={o.generated_at} view={view} marks={marks} />
        ))
      )}
      <Pages overview={o} view={view} limit={limit} />
      <p class="muted">
        As of <time datetime={o.generated_at}>{o.generated_at.replace('T', ' ').slice(0, 19)} UTC</time>.
        <noscript> Reload for the latest.</noscript>
      </p>
    </>
  );
}

/** The heading of a view: the board's, or one person's, or one agent's. */
function viewTitle(o: Overview, view: OverviewView): string {
  if (view.kind === 'person') return `sessions of ${escapeControl(view.id)}`;
  if (view.kind === 'agent') return `what ${escapeControl(view.id)} did`;
  return `board of ${o.tenant}`;
}

/**
 * The overview page (see the module's doc). `live` says how it updates itself: server-sent events from
 * `/board/events`, a conditional poll of `/board/fragment` every 5 s, or not at all (no script).
 */
export function OverviewPage({
  overview,
  view,
  live,
  limit,
}: {
  overview: Overview;
  view: OverviewView;
  live?: LiveMode | undefined;
  limit?: number | undefined;
}) {
  const base = overviewQuery(overview.filters, overview.page, limit);
  const qs = view.kind === 'all' ? base : `${base ? `${base}&` : '?'}view=${view.kind}`;
  const liveAttrs =
    live === 'sse'
      ? { 'hx-ext': 'sse', 'sse-connect': `/board/events${qs}`, 'sse-swap': 'overview' }
      : live === 'poll'
        ? { 'hx-get': `/board/fragment${qs}`, 'hx-trigger': 'every 5s', 'data-etag': `"${overview.etag}"` }
        : {};
  return (
    <Layout title={viewTitle(overview, view)} signedIn live={live} mainId="overview" ownMain>
      {view.kind === 'all' ? null : (
        <p>
          {view.kind === 'person'
            ? 'What this person took part in, each with what they asked first'
            : 'What this agent wrote in'}
          , urgent first. <a href="/">All sessions</a>
          <ViewNameMark overview={overview} view={view} />
        </p>
      )}
      <FilterForm overview={overview} view={view} />
      <main id="overview" {...liveAttrs}>
        <OverviewRegion overview={overview} view={view} limit={limit} />
      </main>
    </Layout>
  );
}
