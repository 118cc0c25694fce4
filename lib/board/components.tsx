/**
 * Pieces of a board row (hono/jsx), shared by the overview and the per-person and per-agent views: a
 * work item with its freshness, the declared evidence's verdicts, ages, and links to a person's and an
 * agent's view. Whatever a writer or an agent wrote goes through `escapeControl` (issue 8.4) besides the
 * HTML escaping hono/jsx does.
 */
import { escapeControl } from '../log/format/escape.js';
import { type LookAlike, sameName } from '../log/format/names.js';
import { uriComponent } from '../log/format/text-cut.js';
import type { BoardSession } from '../service/board/get.js';
import type { OverviewRow } from '../service/board/overview-schemas.js';
import { LookAlikeMark } from './names.js';

/**
 * How long ago `iso` was at `now` (both ISO instants), in words: `just now`, `12 min`, `3 h`, `4 d`.
 * A time after `now` (clock skew) reads `just now`.
 */
export function age(iso: string, now: string): string {
  const min = Math.max(0, Math.floor((Date.parse(now) - Date.parse(iso)) / 60_000));
  if (min < 1) return 'just now';
  if (min < 120) return `${min} min`;
  const h = Math.floor(min / 60);
  return h < 48 ? `${h} h` : `${Math.floor(h / 24)} d`;
}

/**
 * `age` as a phrase after a verb: `just now`, `12 min ago`; a time a minute or more after `now` (a
 * token's expiry) in words, to the nearest unit: `in 1 minute`, `in 12 minutes`, `in 3 hours`, `in 30
 * days`. Less than a minute ahead is clock skew: `just now`.
 */
export function ago(iso: string, now: string): string {
  const ahead = Date.parse(iso) - Date.parse(now);
  if (ahead >= 60_000) {
    const min = Math.round(ahead / 60_000);
    if (min < 120) return `in ${min} minute${min === 1 ? '' : 's'}`;
    const h = Math.round(min / 60);
    return h < 48 ? `in ${h} hours` : `in ${Math.round(min / 1440)} days`;
  }
  const a = age(iso, now);
  return a === 'just now' ? a : `${a} ago`;
}

/** An instant as a `<time>`: readable relative text, the exact instant in `datetime` and on hover. */
export function When({ iso, now }: { iso: string; now: string }) {
  return (
    <time datetime={iso} title={`${iso.replace('T', ' ').slice(0, 19)} UTC`}>
      {ago(iso, now)}
    </time>
  );
}

/** The page of one person (`/people/{user_id}`); never throws (a lone surrogate is sent as U+FFFD). */
export function personHref(userId: string): string {
  return `/people/${uriComponent(userId)}`;
}

/** The page of one agent (`/agents/{agent}`). */
export function agentHref(agent: string): string {
  return `/agents/${uriComponent(agent)}`;
}

/** A session's timeline, for a person's view with `?person=`. */
export function sessionHref(sid: string, person?: string): string {
  return `/sessions/${sid}${person === undefined ? '' : `?person=${uriComponent(person)}`}`;
}

/**
 * One work item under the note (seed 004): what it says and how fresh that is, in the words of
 * docs/work.md. An expired lease is `unknown`, with when it was last reported: never idle.
 */
export function WorkLine({ w }: { w: BoardSession['work'][number] }) {
  const f = w.freshness;
  const when = (iso: string) => ago(iso, f.as_of);
  const fresh =
    f.shown === 'observed'
      ? 'observed'
      : f.shown === 'stopped'
        ? `stopped (${w.outcome}) ${when(f.last_reported.at)}`
        : `unknown: last reported ${when(f.last_reported.at)}`;
  const waiting = w.waiting_on ? `; waiting on ${w.waiting_on.dependency.kind}: ${w.waiting_on.reason}` : '';
  return (
    <div class="muted" data-work={w.id} data-freshness={f.shown}>
      {escapeControl(`${w.actor} ${w.mode}: ${w.summary}${waiting}`)} ({fresh})
    </div>
  );
}

/** The declared evidence's verdicts under the note (docs/status.md): declared, so marked as such. */
export function Verdicts({ evidence: e }: { evidence: BoardSession['evidence'] }) {
  if (!e || e.supported + e.unsupported + e.unchecked === 0) return null;
  const rest = [e.supported ? `${e.supported} supported` : '', e.unchecked ? `${e.unchecked} unchecked` : '']
    .filter(Boolean)
    .join(', ');
  // An unsupported claim is what an auditor scans for: it stands out, the rest stays quiet.
  return (
    <div class="verdicts" data-evidence={`${e.supported}/${e.unsupported}/${e.unchecked}`}>
      <span class="muted">Declared evidence: </span>
      {e.unsupported ? (
        <strong class="unsupported">
          {e.unsupported} unsupported{e.contested ? ` (${e.contested} contested)` : ''}
        </strong>
      ) : null}
      {e.unsupported && rest ? <span class="muted">, </span> : null}
      {rest ? <span class="muted">{rest}</span> : null}
    </div>
  );
}

/**
 * Links to the views of `names` (agents or people), or `none` in words; a name that looks like another
 * of the page's (`marks`) carries its `LookAlikeMark`.
 */
export function NameLinks({
  names,
  href,
  label,
  none,
  marks,
}: {
  names: readonly string[];
  href: (name: string) => string;
  label: string;
  none: string;
  marks?: ReadonlyMap<string, LookAlike> | undefined;
}) {
  if (names.length === 0) return none ? <div class="muted">{none}</div> : null;
  const kind = label === 'people' ? 'person' : 'agent';
  return (
    <ul class={`who who-${label}`} aria-label={label}>
      {names.map((n) => (
        <li>
          <a href={href(n)}>{escapeControl(n)}</a>
          <LookAlikeMark mark={marks?.get(n)} kind={kind} />
        </li>
      ))}
    </ul>
  );
}

/**
 * A row's title: the session's (its first prompt), or in a person's view what that person asked first
 * (issue 14.4), with the session's title beneath when it is someone else's prompt. A person with no
 * prompt kept (joined only, or a session summarized before prompts were kept) gets the session's title.
 */
export function RowTitle({ s, person, href }: { s: OverviewRow; person: string | undefined; href: string }) {
  // A withheld first prompt (its correction may have been dropped) is '': the session's title stands in.
  const asked =
    person === undefined ? undefined : s.asked?.find((a) => sameName(a.user_id, person) && a.text !== '');
  const title = asked?.text ?? s.title;
  // The title is the row's link (the id beneath it, small, is part of the same link).
  return (
    <>
      <a class="row-link" href={href}>
        {title ? (
          <span class="row-title" {...(asked ? { 'data-asked': '' } : {})}>
            {escapeControl(title)}
          </span>
        ) : null}
        <small class="mono">{s.sid}</small>
      </a>
      {asked && s.title && s.title !== asked.text ? (
        <div class="row-sub muted">Session: {escapeControl(s.title)}</div>
      ) : null}
    </>
  );
}
