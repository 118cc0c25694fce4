/**
 * Pieces of the session timeline's rows (issue 14.3; hono/jsx): times with their permalinks, verify
 * findings, corrections, attribution in words, outputs folded past a few lines, and the body of a
 * Declared report. Whatever a writer wrote goes through `escapeControl` (one line) or `keepLines` (free
 * text) besides the HTML escaping hono/jsx does.
 */
import type { Child } from 'hono/jsx';
import { escapeControl } from '../log/format/escape.js';
import type {
  AttributedMessage,
  RowAttribution,
  TimelineProblem,
  TimelineRow,
} from '../service/timeline/schemas.js';
import { keepLines, oneLine } from '../service/timeline/text.js';
import { ClaimBasis, VerdictBadge } from './claim-basis.js';
import { RowA } from './timeline-links.js';

/** One line of writer-given text, escaped. */
export const t = (s: string | null | undefined): string => escapeControl(s ?? '');

/** The writers' colour classes by writer id; people by a hash of their user_id. */
export interface Colours {
  writer: (w: string | null) => string;
  person: (userId: string) => string;
  /** a writer's name (its agent, else its id) */
  name: (w: string | null) => string;
}

/** `HH:MM:SS` of an RFC 3339 ts (as written), the whole ts as its `datetime` and title. */
export function Ts({ ts, anchor }: { ts: string; anchor: string }) {
  const m = /T(\d{2}:\d{2}:\d{2})/.exec(ts);
  const short = m ? m[1]! : t(ts).slice(0, 19) || 'no time';
  return (
    <a class="ts" href={`#${anchor}`} title={`${t(ts)} (link to this row)`}>
      <time datetime={t(ts)} title={t(ts)}>
        {short}
      </time>
    </a>
  );
}

function clock(ts: string | null): string {
  const m = ts ? /T(\d{2}:\d{2})/.exec(ts) : null;
  return m ? m[1]! : 'an unknown time';
}

/** Verify's findings about a row or a writer, each with its severity, code, line and message. */
export function Problems({ problems }: { problems: readonly TimelineProblem[] }) {
  if (problems.length === 0) return null;
  return (
    <ul class="problems" aria-label="verify findings">
      {problems.map((p) => (
        <li data-problem={p.code}>
          <span class="sev">verify {p.severity}</span> <code>{p.code}</code>
          {p.line !== null ? ` (line ${p.line})` : ''}: {t(p.message)}
        </li>
      ))}
    </ul>
  );
}

/** A corrected field's value as one line of compact JSON (escaped, ≤ 200 characters). */
export function value(v: unknown): string {
  return oneLine(v === undefined ? 'undefined' : (JSON.stringify(v) ?? String(v)), 200);
}

/** What corrections changed in a row: each field, the value it replaced, and a link to the correction. */
export function Corrected({ row }: { row: TimelineRow }) {
  if (!row.corrected?.length) return null;
  return (
    <p class="corrected" data-corrected="true">
      Corrected:{' '}
      {row.corrected.map((c, i) => (
        <>
          {i > 0 ? '; ' : ''}
          <code>{t(c.field)}</code> was <code>{value(c.was)}</code> (
          <RowA anchor={c.by_anchor}>correction {t(c.by)}</RowA>
          {c.reason ? `: ${oneLine(c.reason)}` : ''})
        </>
      ))}
    </p>
  );
}

function MessageLink({ m, names }: { m: AttributedMessage; names: Map<string, string> }) {
  const who = m.user_id === null ? 'a message' : `${t(names.get(m.user_id) ?? m.user_id)}'s message`;
  if (!m.anchor) return <>{`${who} ${t(m.id)} (not in this session)`}</>;
  return (
    <RowA anchor={m.anchor}>
      {`${who} at `}
      {m.ts ? (
        <time datetime={t(m.ts)} title={t(m.ts)}>
          {clock(m.ts)}
        </time>
      ) : (
        clock(m.ts)
      )}
    </RowA>
  );
}

function list(items: Child[]): Child[] {
  return items.flatMap((x, i) => (i === 0 ? [x] : [i === items.length - 1 ? ' and ' : ', ', x]));
}

const BASIS: Record<string, string> = {
  recorded: 'recorded by the agent',
  recorded_context: "from the turn's recorded context",
  temporal: 'inferred: the only person who wrote before this turn',
  cascade: 'inferred: it follows the result of',
};

/** The Attributor's answer in words (docs/attribution.md), its messages linked. */
export function AttributionLine({ a, names }: { a: RowAttribution | null; names: Map<string, string> }) {
  if (!a) return null;
  const conf = Number(a.confidence.toFixed(2));
  let body: Child;
  if (a.basis === 'contested' && a.candidates) {
    body = (
      <>
        contested: it may answer{' '}
        {list(
          a.candidates.map((c) => <>{list(c.messages.map((m) => <MessageLink m={m} names={names} />))}</>),
        )}{' '}
        ({conf} each; the transcript does not say which)
      </>
    );
  } else if (a.basis === 'none') {
    body = <>attributed to no one: no message came before it</>;
  } else if (a.basis === 'recorded_no_cause') {
    body = <>the agent recorded that no message caused it</>;
  } else if (a.basis === 'recorded_empty_context') {
    body = <>its turn began having seen no message (recorded)</>;
  } else {
    body = (
      <>
        answers to {list(a.messages.map((m) => <MessageLink m={m} names={names} />))} (
        {BASIS[a.basis] ?? a.basis}
        {a.cascade_from ? (
          <>
            {' '}
            <RowA anchor={a.cascade_from.anchor}>{t(a.cascade_from.id)}</RowA>
          </>
        ) : null}
        , confidence {conf})
      </>
    );
  }
  return (
    <p class="attr" data-basis={a.basis}>
      {body}
    </p>
  );
}

/** How much of a text was left out, when some was. */
export function Cut({ more }: { more: number }) {
  return more > 0 ? (
    <p class="cut">… {more.toLocaleString('en')} more bytes (the replay download has all of it)</p>
  ) : null;
}

/** Lines of output shown open; a longer one is folded under a summary saying how long it is. */
const OPEN_LINES = 8;

/** An action's output: short ones as they are, longer ones folded (a `<details>`, closed). */
export function Output({ text, more }: { text: string; more: number }) {
  if (!text) return <Cut more={more} />;
  const lines = text.split('\n').length;
  const pre = <pre class="out">{keepLines(text)}</pre>;
  if (lines <= OPEN_LINES && text.length <= 800) {
    return (
      <>
        {pre}
        <Cut more={more} />
      </>
    );
  }
  const size = Buffer.byteLength(text, 'utf8') + more;
  return (
    <details class="output">
      <summary>
        Output: {lines.toLocaleString('en')} lines{more > 0 ? ' shown' : ''}, {size.toLocaleString('en')}{' '}
        bytes
      </summary>
      {pre}
      <Cut more={more} />
    </details>
  );
}

/** A result's duration as a phrase after its exit code: ` · 850 ms`, ` · 2.0 s`; '' when unknown. */
export function duration(ms: number | null): string {
  if (ms === null) return '';
  if (ms < 0) return ' · finished before it started (clock skew)';
  return ms < 1000 ? ` · ${Math.round(ms)} ms` : ` · ${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

/** A Declared row: an agent's status report, each claim with its verdict and why. */
export function DeclaredBody({ row }: { row: Extract<TimelineRow, { kind: 'declared' }> }) {
  const r = row.report;
  const claims = r.events.flatMap((e) =>
    e.evidence.length === 0
      ? [<li>{e.kind} (no evidence given)</li>]
      : e.evidence.map((i) => (
          <li data-verdict={i.check.verdict}>
            {e.kind}: {i.type} <code>{t(i.ref)}</code> {t(i.result)} — <VerdictBadge check={i.check} />
            {i.check.verdict !== 'supported' || !i.check.action_id ? `: ${t(i.check.reason)}` : ''}
            <ClaimBasis check={i.check} />
            {i.check.action_id && row.action_anchors[i.check.action_id] ? (
              <>
                {' '}
                (<RowA anchor={row.action_anchors[i.check.action_id]!}>the recorded action</RowA>)
              </>
            ) : null}
          </li>
        )),
  );
  return (
    <>
      <div class="row-head">
        <span class="declared-badge">Declared</span>
        <span class={`state ${r.state}`}>{r.state.replace('_', ' ')}</span>
        <Ts ts={r.reported_at} anchor={row.anchor} />
      </div>
      <p class="row-body">
        An agent's status report (its own words, not proof){r.note ? ': ' : '.'}
        {r.note ? <q>{t(r.note)}</q> : null}
      </p>
      {claims.length > 0 ? <ul class="claims">{claims}</ul> : null}
      {r.events_dropped ? (
        <p class="cut">{r.events_dropped} older events of this report were not kept.</p>
      ) : null}
    </>
  );
}
