/**
 * When things happened, for the session page (issue 14 finding 2): the day a row's `ts` falls on as a
 * heading ("Saturday 14 June 2025") where the date changes, and the header's lines saying when the
 * session ran (its first and last event) and when it was uploaded. Dates and clocks are those of the ts
 * as written (the rows' clock times are too), so a heading never disagrees with the times under it; the
 * zone is said once (`UTC` for `Z`, else the offset). Each `<time>` carries the whole ts as its
 * `datetime` and `title`.
 */
import { t } from './timeline-parts.js';

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const TS = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.\d+)?(Z|z|[+-]\d{2}:?\d{2})?/;

/** The date part of an RFC 3339 ts as written (`2025-06-14`), null when it is not one. */
export function dayOf(ts: string | null | undefined): string | null {
  const m = ts ? TS.exec(ts) : null;
  return m ? `${m[1]}-${m[2]}-${m[3]}` : null;
}

/** `2025-06-14` as "Saturday 14 June 2025"; the day as given when it is not a calendar date. */
export function dayName(day: string): string {
  const [y, mo, d] = day.split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(y, mo - 1, d));
  if (Number.isNaN(date.getTime()) || date.getUTCDate() !== d) return day;
  return `${DAYS[date.getUTCDay()]} ${d} ${MONTHS[mo - 1]} ${y}`;
}

/** The list item that heads a day's rows. */
export function DayHeading({ day }: { day: string }) {
  return (
    <li class="day" data-day={day}>
      <h4>
        <time datetime={day}>{dayName(day)}</time>
      </h4>
    </li>
  );
}

function zoneOf(ts: string): string {
  const z = TS.exec(ts)?.[5];
  return !z || z === 'Z' || z === 'z' ? 'UTC' : z;
}

/** "Saturday 14 June 2025, 10:00:00" of a ts as written, in a `<time>` titled with the whole ts. */
function At({ ts, withDay = true }: { ts: string; withDay?: boolean }) {
  const m = TS.exec(ts);
  const day = dayOf(ts);
  const text = m && day ? (withDay ? `${dayName(day)}, ${m[4]}` : m[4]!) : t(ts);
  return (
    <time datetime={t(ts)} title={t(ts)}>
      {text}
    </time>
  );
}

/** A span of two ts: both with their day, or the second as a clock alone when it is the same day. */
function Span({ first, last }: { first: string; last: string }) {
  const same = dayOf(first) !== null && dayOf(first) === dayOf(last);
  return (
    <>
      <At ts={first} /> to <At ts={last} withDay={!same} /> {zoneOf(last)}
    </>
  );
}

/** The header's "Ran … to …" and "Uploaded … to …" lines (see the module's doc). */
export function SessionWhen({
  span,
  uploaded,
}: {
  span: { first: string | null; last: string | null };
  uploaded: { first: string; last: string } | null;
}) {
  return (
    <p class="when">
      {span.first && span.last ? (
        <span data-when="ran">
          Ran <Span first={span.first} last={span.last} />.
        </span>
      ) : (
        <span data-when="ran">No event of it has a readable time.</span>
      )}{' '}
      {uploaded ? (
        <span data-when="uploaded" class="muted">
          Uploaded <Span first={uploaded.first} last={uploaded.last} />.
        </span>
      ) : null}
    </p>
  );
}
