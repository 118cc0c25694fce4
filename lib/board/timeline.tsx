/**
 * The session page (`/sessions/{sid}`, issue 14.3): a session's timeline an auditor can read. A header
 * (the first prompt as title, the state, people and agents), a legend of the writers each with its colour
 * and name, the rows (./timeline-rows.tsx; turns folded in `<details open>`, no script needed), "Load
 * more" as a link (`?after=`; with JavaScript, htmx appends the next rows in place), and a side panel
 * (`<aside>`, first in the page: above the rows on a phone, its parts folded there by board.js) with the status history and its verdicts, the work items with
 * their freshness (never "idle"), the alerts the session fired (./alerts.tsx, when it fired any) and the downloads (the API routes, which take the board's cookie).
 * Server-rendered; works with JavaScript off.
 */

import type { StatusView } from '../contract/status.js';
import type { WorkSummary } from '../contract/work.js';
import { escapeControl } from '../log/format/escape.js';
import { uniqueNames } from '../log/format/names.js';
import type { TimelinePage } from '../service/timeline/schemas.js';
import { idAnchor } from '../service/timeline/text.js';
import { type SessionAlert, SessionAlertsPart } from './alerts.js';
import { assetHref } from './assets.js';
import { ClaimBasis, PROVENANCE_WORDS, VerdictBadge } from './claim-basis.js';
import { agentHref, personHref, WorkLine } from './components.js';
import { HTMX_CONFIG, Layout, StateBadge } from './layout.js';
import { LookAlikeMark, nameMarks } from './names.js';
import { RowA, RowLinks } from './timeline-links.js';
import { type Colours, Problems, Rows, t } from './timeline-rows.js';
import { PALETTE_SIZE, TIMELINE_CSS } from './timeline-styles.js';
import { SessionWhen } from './timeline-when.js';

/** A palette index for a person: a stable hash of their user_id (people are not writers). */
function personColour(userId: string): number {
  let h = 0;
  for (let i = 0; i < userId.length; i++) h = (h * 31 + userId.charCodeAt(i)) >>> 0;
  return h % PALETTE_SIZE;
}

function colours(tl: TimelinePage): Colours {
  const index = new Map(tl.writers.map((w) => [w.w, w.index % PALETTE_SIZE]));
  const names = new Map(tl.writers.map((w) => [w.w, w.name]));
  return {
    writer: (w) => (w !== null && index.has(w) ? `wc${index.get(w)}` : ''),
    person: (u) => `wc${personColour(u)}`,
    name: (w) => (w === null ? '' : (names.get(w) ?? w)),
  };
}

/** How many of a report's claims are contested (another writer corrected what they rest on). */
const contestedIn = (items: { check: { contested: unknown[] } }[]) =>
  items.filter((x) => x.check.contested.length > 0).length;

function StatusHistory({ status }: { status: StatusView | null }) {
  if (!status) return <p class="muted">No agent reported a status for this session.</p>;
  const e = status.evidence;
  return (
    <>
      <p class="muted">
        Declared by the agents, oldest first; claims checked against the transcript: {e.supported} supported,{' '}
        {e.unsupported} unsupported{e.contested ? ` (${e.contested} contested)` : ''}, {e.unchecked}{' '}
        unchecked.
        {status.dropped_reports ? ` ${status.dropped_reports} older reports were not kept.` : ''}
      </p>
      <ol class="history">
        {status.history.map((r, i) => {
          const items = r.events.flatMap((ev) => ev.evidence.map((x) => ({ kind: ev.kind, ...x })));
          const count = (v: string) => items.filter((x) => x.check.verdict === v).length;
          return (
            <li data-report={i}>
              <StateBadge state={r.state} />{' '}
              <time datetime={r.reported_at}>{r.reported_at.replace('T', ' ').slice(0, 19)} UTC</time> (
              <RowA anchor={`d-${i}`}>in the timeline</RowA>){r.note ? <div>{t(r.note)}</div> : null}
              {items.length > 0 ? (
                <>
                  <div class="muted">
                    {count('supported')} supported, {count('unsupported')} unsupported
                    {contestedIn(items) ? ` (${contestedIn(items)} contested)` : ''}, {count('unchecked')}{' '}
                    unchecked
                  </div>
                  <ul class="claims">
                    {items.map((x) => (
                      <li data-verdict={x.check.verdict}>
                        {x.kind} {x.type} <code>{t(x.ref)}</code> {x.result}: <VerdictBadge check={x.check} />
                        {x.check.verdict === 'supported' ? '' : ` (${t(x.check.reason)})`}
                        <ClaimBasis check={x.check} />
                        {x.check.action_id ? (
                          <>
                            {' '}
                            (<RowA anchor={idAnchor(x.check.action_id)}>the recorded action</RowA>)
                          </>
                        ) : null}
                      </li>
                    ))}
                  </ul>
                </>
              ) : null}
            </li>
          );
        })}
      </ol>
    </>
  );
}

function Downloads({ tl }: { tl: TimelinePage }) {
  const base = `/v1/sessions/${tl.sid}`;
  return (
    <ul class="downloads">
      <li>
        <a href={`${base}/replay`} download={`${tl.sid}.ndjson`}>
          Merged replay (NDJSON)
        </a>
      </li>
      <li>
        <a href={`${base}/replay?format=text`} download={`${tl.sid}.txt`}>
          Merged replay (text)
        </a>
      </li>
      <li>
        <a href={`${base}/replay?raw=1`} download={`${tl.sid}.raw.ndjson`}>
          Raw replay (every line as written)
        </a>
      </li>
      {tl.writers.map((w) => (
        <li>
          <a href={`${base}/writers/${w.w}/segment`} download={`${tl.sid}-${w.w}.ndjson`}>
            Segment of {t(w.name)}
          </a>{' '}
          <small class="mono">{w.w}</small>
        </li>
      ))}
      <li>
        <a href={`${base}/verify`} download={`${tl.sid}.verify.json`}>
          Verify report (JSON)
        </a>
      </li>
    </ul>
  );
}

/**
 * "Load more": a link to the next page (`?after=`), which works without JavaScript. Where htmx is served
 * (./assets.ts), the link also loads the next rows once it scrolls into view and appends them to the list
 * (`hx-select` of the next page's rows, `hx-swap="beforeend"`), replacing itself with the next page's
 * link (`hx-select-oob`): the page coordinates with htmx through these attributes alone, no script of ours.
 */
function MoreRows({ tl }: { tl: TimelinePage }) {
  if (!tl.more || tl.next_after === null) {
    return (
      <div id="more-rows">
        <p class="muted">End of the session as stored now.</p>
      </div>
    );
  }
  const href = pageHref(tl.sid, tl.next_after, tl.person);
  const htmx = assetHref('htmx.min.js');
  const append = htmx
    ? {
        'hx-get': href,
        'hx-trigger': 'revealed',
        'hx-select': '#rows-list > li',
        'hx-target': '#rows-list',
        'hx-swap': 'beforeend',
        'hx-select-oob': '#more-rows',
      }
    : {};
  return (
    <div id="more-rows">
      <nav class="page-nav" aria-label="more of the timeline">
        <a class="more" rel="next" href={`${href}#rows`} {...append}>
          Load more rows
        </a>
      </nav>
    </div>
  );
}

/** htmx for "Load more" (when it is served), configured as the board's other pages configure it. */
function Htmx() {
  const src = assetHref('htmx.min.js');
  const ours = assetHref('board.js');
  return (
    <>
      {src ? (
        <>
          <meta name="htmx-config" content={HTMX_CONFIG} />
          <script src={src} defer />
        </>
      ) : null}
      {/* folds the side panel's parts on a phone (./client-script.ts) */}
      {ours ? <script src={ours} defer /> : null}
    </>
  );
}

/** What the page is given: the timeline page, the session's work items, and how it was asked for. */
export interface SessionTimelineProps {
  tl: TimelinePage;
  work: WorkSummary[];
  /** the alerts this session fired, newest first (issue 28 item 5); none: no "Alerts" part */
  alerts?: SessionAlert[];
  /** now (ISO 8601), for the alerts' ages */
  now?: string;
}

function pageHref(sid: string, after: number, person: string | null): string {
  const q = new URLSearchParams();
  if (after >= 0) q.set('after', String(after));
  if (person !== null) q.set('person', person);
  const s = q.toString();
  return `/sessions/${sid}${s ? `?${s}` : ''}`;
}

/** The session page (see the module's doc). */
export function SessionTimelinePage({ tl, work, alerts = [], now }: SessionTimelineProps) {
  const after = tl.after;
  const c = colours(tl);
  const links = { sid: tl.sid, person: tl.person, onPage: new Set(tl.rows.map((r) => r.anchor)) };
  const names = new Map(tl.people.map((p) => [p.user_id, p.display_name ?? p.user_id]));
  // one agent however its name is composed (NFC); names that only look alike are marked (issue 25.6)
  const agents = uniqueNames(tl.writers.map((w) => w.agent).filter((a): a is string => a !== null));
  const userIds = tl.people.map((p) => p.user_id);
  const marks = nameMarks(agents, userIds);
  const title = tl.title ?? tl.sid;
  const state = tl.status?.state ?? null;
  const v = tl.verify;
  return (
    <Layout title={escapeControl(title)} signedIn ownMain>
      <RowLinks.Provider value={links}>
        {/* A constant of ours, not user text: given as is so that its `>` selectors stay selectors. */}
        <style dangerouslySetInnerHTML={{ __html: TIMELINE_CSS }} />
        <Htmx />
        <div class="session">
          {/* First in the page: on a phone it comes before the rows (a long timeline would put it
              thousands of pixels down), each part foldable; beside the rows on a wide screen. */}
          <aside id="side" aria-label="Status, work, alerts and downloads">
            <details class="side-part" open>
              <summary>
                <h2 id="side-status">Status history</h2>
              </summary>
              <StatusHistory status={tl.status} />
            </details>
            <details class="side-part" open>
              <summary>
                <h2>Work items</h2>
              </summary>
              {work.length === 0 ? (
                <p class="muted">No work item names this session.</p>
              ) : (
                work.map((w) => <WorkLine w={w} />)
              )}
            </details>
            <SessionAlertsPart alerts={alerts} now={now ?? new Date().toISOString()} />
            <details class="side-part" open>
              <summary>
                <h2>Downloads</h2>
              </summary>
              <Downloads tl={tl} />
            </details>
          </aside>
          <main id="content" aria-labelledby="tl-title">
            <nav class="back" aria-label="back">
              <a href="/">← Board</a>
            </nav>
            <h2 id="tl-title">{t(title)}</h2>
            <p>
              <StateBadge state={state} /> {t(tl.status?.note ?? '')} <small class="mono">{tl.sid}</small>
            </p>
            <SessionWhen span={tl.span} uploaded={tl.uploaded} />
            <p>
              People in this session:{' '}
              {tl.people.length === 0
                ? 'none'
                : tl.people.map((p, i) => (
                    <>
                      {i > 0 ? ', ' : ''}
                      <a href={personHref(p.user_id)}>{t(p.display_name ?? p.user_id)}</a>
                      {p.display_name ? <> ({t(p.user_id)})</> : null}
                      <LookAlikeMark mark={marks.people.get(p.user_id)} kind="person" />{' '}
                      <small>
                        (
                        <a
                          href={pageHref(tl.sid, -1, p.user_id)}
                        >{`only ${t(p.display_name ?? p.user_id)}'s rows`}</a>
                        )
                      </small>
                    </>
                  ))}
              . Agents:{' '}
              {agents.length === 0
                ? 'none named'
                : agents.map((a, i) => (
                    <>
                      {i > 0 ? ', ' : ''}
                      <a href={agentHref(a)}>{t(a)}</a>
                      <LookAlikeMark mark={marks.agents.get(a)} kind="agent" />
                    </>
                  ))}
              .
            </p>
            <h3>Writers</h3>
            <ul class="legend" aria-label="writers and their colours">
              {tl.writers.map((w) => (
                <li data-writer={w.w}>
                  <span class={`chip ${c.writer(w.w)}`}>{t(w.name)}</span> <small class="mono">{w.w}</small>
                  {w.ended ? ' ended' : ' open'}, {w.lines.toLocaleString('en')} lines,{' '}
                  <span class="provenance" data-provenance={w.provenance}>
                    {PROVENANCE_WORDS[w.provenance] ?? w.provenance}
                  </span>
                  {w.token_label === null ? '' : <> (uploaded with token “{t(w.token_label)}”)</>}
                  {w.mixed_tokens ? (
                    <span class="provenance" data-mixed-tokens="1">
                      ; chunks appended by another token: never evidence
                    </span>
                  ) : null}
                  <Problems problems={w.problems} />
                </li>
              ))}
            </ul>
            <p data-verify={v.ok ? 'ok' : 'problems'}>
              Verify: {v.ok ? 'no errors' : `${v.errors} error${v.errors === 1 ? '' : 's'}`}, {v.warnings}{' '}
              warning
              {v.warnings === 1 ? '' : 's'}, {v.infos} note{v.infos === 1 ? '' : 's'}; each is shown at its
              row.
            </p>
            <Problems problems={tl.session_problems} />
            {tl.person !== null ? (
              <p class="filter">
                Showing what <strong>{t(names.get(tl.person) ?? tl.person)}</strong> wrote and the turns
                attributed to them. <a href={pageHref(tl.sid, -1, null)}>Show the whole session</a>.
              </p>
            ) : null}
            <h3 id="rows">Timeline{after >= 0 ? ' (continued)' : ''}</h3>
            {after >= 0 ? (
              <nav class="page-nav" aria-label="timeline pages">
                <a href={pageHref(tl.sid, -1, tl.person)}>Back to the start</a>
              </nav>
            ) : null}
            {tl.rows.length === 0 ? (
              <p class="empty">No rows{after >= 0 ? ' after this point' : ''}.</p>
            ) : null}
            <Rows rows={tl.rows} c={c} names={names} />
            <MoreRows tl={tl} />
          </main>
        </div>
      </RowLinks.Provider>
    </Layout>
  );
}

/** A session with no segments yet, but a status report: the report alone (a mistyped id looks the same). */
export function StatusOnlyPage({
  sid,
  status,
  alerts = [],
  now,
}: {
  sid: string;
  status: StatusView;
  alerts?: SessionAlert[];
  now?: string;
}) {
  return (
    <Layout title={sid} signedIn>
      <p>
        <StateBadge state={status.state} /> {t(status.note)}
      </p>
      <p class="muted">
        An agent reported on this session, but nothing of it was uploaded. A report may come first; a mistyped
        session id looks the same.
      </p>
      <h2>Status history</h2>
      <StatusHistory status={status} />
      <SessionAlertsPart alerts={alerts} now={now ?? new Date().toISOString()} />
    </Layout>
  );
}
