/**
 * The board's server-rendered pages (hono/jsx): the status board, a session's timeline, and sign-in.
 * Plain HTML and a little CSS; no script, so the pages work with JavaScript off and under a strict CSP.
 * hono/jsx escapes HTML; what writers and agents wrote (names, notes, the timeline) also goes through
 * `escapeControl`, so a newline cannot forge a timeline line and a bidi override cannot reorder the page
 * (issue 8.4).
 */
import type { Child } from 'hono/jsx';
import { escapeControl } from '../log/escape.js';
import type { Board, BoardSession } from '../service/board.js';
import { HANSARD_VERSION } from '../version.js';

const CSS = `
:root { color-scheme: light dark; --muted: #6b7280; --line: #d1d5db; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1.5rem; }
header { display: flex; justify-content: space-between; align-items: baseline; border-bottom: 1px solid var(--line); margin-bottom: 1rem; }
h1 { font-size: 1.3rem; margin: .2rem 0 .6rem; } h1 a { color: inherit; text-decoration: none; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .45rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85rem; }
.state { display: inline-block; padding: .05rem .5rem; border-radius: 1rem; font-size: .8rem; font-weight: 600; white-space: nowrap; }
time, header button { white-space: nowrap; }
.working { background: #dbeafe; color: #1e3a8a; } .blocked { background: #fee2e2; color: #7f1d1d; }
.needs_review { background: #fef3c7; color: #78350f; } .done { background: #dcfce7; color: #14532d; }
.none { background: #e5e7eb; color: #374151; }
.muted { color: var(--muted); } .empty { padding: 2rem 0; }
pre.timeline { white-space: pre-wrap; word-break: break-word; font-size: .8rem; line-height: 1.5; }
form.inline { display: inline; } button { font: inherit; cursor: pointer; }
.error { color: #b91c1c; }
nav.pages { margin: 1rem 0; } p.count { margin: 0 0 .8rem; }
`;

function Layout(props: { title: string; signedIn?: boolean; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{props.title}</title>
        <style>{CSS}</style>
      </head>
      <body>
        <header>
          <h1>
            <a href="/">hansard</a> <span class="muted">· {props.title}</span>
          </h1>
          {props.signedIn ? (
            <form class="inline" method="post" action="/logout">
              <button type="submit">Sign out</button>
            </form>
          ) : null}
        </header>
        {props.children}
        <footer class="muted">
          <p>
            hansard {HANSARD_VERSION}. States are agents' own reports, not proof; the transcript is the
            record.
          </p>
          <p>
            <a href="/v1/docs">API reference</a>
          </p>
        </footer>
      </body>
    </html>
  );
}

function StateBadge({ state }: { state: string | null }) {
  return <span class={`state ${state ?? 'none'}`}>{state ? state.replace('_', ' ') : 'no report'}</span>;
}

/**
 * One work item under the note (seed 004): what it says and how fresh that is, in the words of
 * docs/work.md. An expired lease is `unknown`, with when it was last reported: never idle.
 */
function WorkLine({ w }: { w: BoardSession['work'][number] }) {
  const f = w.freshness;
  const ago = (iso: string) => {
    const min = Math.max(0, Math.round((Date.parse(f.as_of) - Date.parse(iso)) / 60_000));
    return min < 1 ? 'just now' : min < 120 ? `${min} min ago` : `${Math.round(min / 60)} h ago`;
  };
  const fresh =
    f.shown === 'observed'
      ? 'observed'
      : f.shown === 'stopped'
        ? `stopped (${w.outcome}) ${ago(f.last_reported.at)}`
        : `unknown: last reported ${ago(f.last_reported.at)}`;
  const waiting = w.waiting_on ? `; waiting on ${w.waiting_on.dependency.kind}: ${w.waiting_on.reason}` : '';
  return (
    <div class="muted" data-work={w.id} data-freshness={f.shown}>
      {escapeControl(`${w.actor} ${w.mode}: ${w.summary}${waiting}`)} ({fresh})
    </div>
  );
}

/** The declared evidence's verdicts under the note (docs/status.md): declared, so marked as such. */
function Verdicts({ evidence: e }: { evidence: BoardSession['evidence'] }) {
  if (!e || e.supported + e.unsupported + e.unchecked === 0) return null;
  const parts = [
    e.supported ? `${e.supported} supported` : '',
    e.unsupported ? `${e.unsupported} unsupported` : '',
    e.unchecked ? `${e.unchecked} unchecked` : '',
  ].filter(Boolean);
  return (
    <div class="muted" data-evidence={`${e.supported}/${e.unsupported}/${e.unchecked}`}>
      Declared evidence, all reports kept: {parts.join(', ')}
    </div>
  );
}

function Row({ s }: { s: BoardSession }) {
  return (
    <tr data-sid={s.sid}>
      <td>
        <a class="mono" href={`/sessions/${s.sid}`}>
          {s.sid}
        </a>
        <div class="muted">{s.agents.length ? s.agents.map(escapeControl).join(', ') : 'no writer yet'}</div>
      </td>
      <td>
        <StateBadge state={s.state} />
      </td>
      <td>
        {escapeControl(s.note ?? '')}
        <Verdicts evidence={s.evidence} />
        {s.work.map((w) => (
          <WorkLine w={w} />
        ))}
      </td>
      <td>
        <time datetime={s.last_activity}>{s.last_activity.replace('T', ' ').slice(0, 19)}Z</time>
      </td>
      <td class="muted">
        {s.writers} writer{s.writers === 1 ? '' : 's'}, {s.lines} line{s.lines === 1 ? '' : 's'}
      </td>
    </tr>
  );
}

function SessionTable({ sessions }: { sessions: BoardSession[] }) {
  return (
    <table>
      <thead>
        <tr>
          <th>Session</th>
          <th>State</th>
          <th>Note</th>
          <th>Last activity</th>
          <th>Size</th>
        </tr>
      </thead>
      <tbody>
        {sessions.map((s) => (
          <Row s={s} />
        ))}
      </tbody>
    </table>
  );
}

/** How many sessions, as a phrase: `1 session`, `312 sessions`. */
function sessionsPhrase(n: number): string {
  return `${n.toLocaleString('en')} session${n === 1 ? '' : 's'}`;
}

/**
 * The status board: the tenant's sessions, most recent activity first, a page at a time (issue 8.7), with
 * how many there are in all. `nextHref` links the next page (null on the last); `later` says this is not
 * the first page (so it links back to it).
 */
export function BoardPage({
  board,
  nextHref,
  later,
}: {
  board: Board;
  nextHref: string | null;
  later: boolean;
}) {
  const pages =
    nextHref || later ? (
      <nav class="pages">
        {later ? <a href="/">First page</a> : null}
        {later && nextHref ? ' · ' : null}
        {nextHref ? (
          <a href={nextHref} rel="next">
            Next page
          </a>
        ) : null}
      </nav>
    ) : null;
  // Sessions known only from a status report sit apart, so a typo cannot pass for a session.
  const recorded = board.sessions.filter((s) => s.writers > 0);
  const reportedOnly = board.sessions.filter((s) => s.writers === 0);
  return (
    <Layout title={`board of ${board.tenant}`} signedIn>
      <p class="count">
        <strong>{sessionsPhrase(board.total)}</strong>
        {board.sessions.length < board.total
          ? `, ${board.sessions.length.toLocaleString('en')} on this page`
          : null}
      </p>
      {board.sessions.length === 0 ? (
        <div class="empty">
          {later ? (
            <p>
              No sessions on this page. Back to the <a href="/">first page</a>.
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
        <>
          {recorded.length > 0 ? <SessionTable sessions={recorded} /> : null}
          {reportedOnly.length > 0 ? (
            <section class="no-segments">
              <h2>No segments yet</h2>
              <p class="muted">
                An agent reported on these sessions, but nothing of them was uploaded. A report may come
                first; a mistyped session id looks the same.
              </p>
              <SessionTable sessions={reportedOnly} />
            </section>
          ) : null}
        </>
      )}
      {pages}
      <p class="muted">As of {board.generated_at}. Reload for the latest.</p>
    </Layout>
  );
}

/** A board link that cannot be followed (a page cursor the server did not give, a bad `?limit=`). */
export function BadPageLinkPage({ message }: { message: string }) {
  return (
    <Layout title="not a page of the board" signedIn>
      <p class="error">{message}</p>
      <p>
        Go to the <a href="/">first page</a> of the board.
      </p>
    </Layout>
  );
}

/** A session's timeline: its status and the merged replay as text. */
export function SessionPage(props: {
  sid: string;
  state: string | null;
  note: string | null;
  lines: string[];
  more: boolean;
}) {
  return (
    <Layout title={props.sid} signedIn>
      <p>
        <StateBadge state={props.state} /> {escapeControl(props.note ?? '')}
      </p>
      {/* The text replay escapes already; again here (it changes nothing then) in case a line did not. */}
      <pre class="timeline">{props.lines.map(escapeControl).join('\n')}</pre>
      {props.more ? (
        <p class="muted">
          Only the first {props.lines.length} events are shown; download the replay for all.
        </p>
      ) : null}
    </Layout>
  );
}

/** Sign-in: paste a token (the link `hansard serve` prints does this for you). */
export function LoginPage({ error }: { error?: string }) {
  return (
    <Layout title="sign in">
      <p>
        Open the board link that <code>hansard serve</code> printed, or paste a token with the{' '}
        <code>board</code> scope (create one with <code>hansard token create --scopes board</code>).
      </p>
      {error ? <p class="error">{error}</p> : null}
      <form method="post" action="/login">
        <label>
          Token <input name="token" type="password" autocomplete="off" size={50} required />
        </label>{' '}
        <button type="submit">Sign in</button>
      </form>
    </Layout>
  );
}

/**
 * Asked instead of signing in when a board link arrives from another site or from a client that does
 * not say where it came from (lib/http/routes/pages/sign-in.tsx): the tenant it signs in to, and a
 * button that posts the token to `/login`.
 */
export function ConfirmSignInPage({ tenant, token }: { tenant: string; token: string }) {
  return (
    <Layout title="sign in">
      <p>
        This link signs this browser in to the board of tenant <strong>{escapeControl(tenant)}</strong>.
      </p>
      <p class="muted">
        Continue only if you opened it yourself (it is the link <code>hansard serve</code> printed, or one you
        were given to sign in with). Another site may have sent you here to sign you in to a board of its
        choosing.
      </p>
      <form method="post" action="/login">
        <input type="hidden" name="token" value={token} />
        <button type="submit">Sign in to {escapeControl(tenant)}</button>
      </form>
    </Layout>
  );
}

/**
 * A session page the server will not build now (429): the token already runs `limit` whole-session reads
 * at once (replays, downloads, verifies, inspects, these pages; docs/operations.md "Replay caps").
 */
export function BusyPage({ limit, retryAfterSeconds }: { limit: number; retryAfterSeconds: number }) {
  return (
    <Layout title="busy" signedIn>
      <p class="error">
        This token already reads {limit} whole sessions at once (replays, downloads, verifies or session
        pages), the most it may.
      </p>
      <p>
        Reload this page in {retryAfterSeconds} seconds, once one of them has finished, or go back to the{' '}
        <a href="/">board</a>.
      </p>
    </Layout>
  );
}

/** A page for a missing session (the same for another tenant's). */
export function NotFoundPage() {
  return (
    <Layout title="not found" signedIn>
      <p>
        There is no such session. Back to the <a href="/">board</a>.
      </p>
    </Layout>
  );
}
