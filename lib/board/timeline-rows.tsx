/**
 * The rows of a session's timeline (issue 14.3; hono/jsx, no script): one `<li>` per row with a stable
 * `id` (its anchor), the writer's colour and name, what happened, and below it the verify findings and
 * corrections that concern it; a turn's rows folded in a `<details open>`. hono/jsx escapes HTML; every
 * id, name and text a writer wrote also goes through `escapeControl` (one line) or `keepLines` (free
 * text), so markup shows as text and no control or bidi character reaches the page raw.
 */
import type { Child } from 'hono/jsx';
import type { TimelineRow } from '../service/timeline/schemas.js';
import { keepLines, oneLine } from '../service/timeline/text.js';
import { RowA } from './timeline-links.js';
import {
  AttributionLine,
  type Colours,
  Corrected,
  Cut,
  DeclaredBody,
  duration,
  Output,
  Problems,
  Ts,
  t,
  value,
} from './timeline-parts.js';
import { DayHeading, dayOf } from './timeline-when.js';
import { COST_TITLE, UsageNote, usageLine } from './usage-parts.js';

export { type Colours, Problems, t } from './timeline-parts.js';

function Head({
  row,
  kind,
  who,
  whoClass,
}: {
  row: TimelineRow;
  kind: string;
  who: string;
  whoClass: string;
}) {
  // a writer's chip keeps its id on hover (a person's chip is named by their user_id already)
  const title = whoClass.startsWith('person-chip') || row.w === null ? undefined : row.w;
  return (
    <div class="row-head">
      <span class={`chip ${whoClass}`} title={title}>
        {who}
      </span>
      <span class="kind">{kind}</span>
      {row.ts ? <Ts ts={row.ts} anchor={row.anchor} /> : <a href={`#${row.anchor}`}>link to this row</a>}
    </div>
  );
}

/** A row's contents (not its `<li>`). */
function RowBody({ row, c, names }: { row: TimelineRow; c: Colours; names: Map<string, string> }) {
  const wc = c.writer(row.w);
  switch (row.kind) {
    case 'writer_start':
      return (
        <>
          <Head row={row} kind="writer starts" who={t(row.name)} whoClass={wc} />
          <p class="row-body">
            Writer <code>{t(row.w)}</code>
            {row.agent ? ` (agent ${t(row.agent)})` : ''}
            {row.app ? `, app ${t(row.app)}` : ''}
            {row.host ? `, host ${t(row.host)}` : ''}
          </p>
        </>
      );
    case 'writer_end':
      return (
        <>
          <Head row={row} kind="writer ends" who={t(row.name)} whoClass={wc} />
          {row.reason ? <p class="row-body">{t(row.reason)}</p> : null}
        </>
      );
    case 'join':
    case 'leave':
      return (
        <>
          <Head
            row={row}
            kind={row.kind === 'join' ? 'joins' : 'leaves'}
            who={t(row.display_name ?? row.user_id)}
            whoClass={`person-chip ${c.person(row.user_id)}`}
          />
          <p class="row-body">
            <code>{t(row.user_id)}</code> {row.kind === 'join' ? 'joins the session' : 'leaves the session'}
          </p>
        </>
      );
    case 'message':
      return (
        <>
          <Head
            row={row}
            kind="message"
            who={t(row.name)}
            whoClass={`person-chip ${c.person(row.user_id)}`}
          />
          <p class="text">{keepLines(row.text)}</p>
          <Cut more={row.more_bytes} />
        </>
      );
    case 'action':
      return (
        <>
          <Head row={row} kind="action" who={t(row.by)} whoClass={wc} />
          <p class="row-body">
            <code>{t(row.tool)}</code> <code class="summary">{t(row.summary)}</code>
          </p>
          <AttributionLine a={row.attribution} names={names} />
        </>
      );
    case 'result': {
      const failed = row.status !== 'ok' || (row.exit_code !== null && row.exit_code !== 0);
      return (
        <>
          <Head row={row} kind="result" who={t(row.by)} whoClass={wc} />
          <p class="row-body">
            Result of{' '}
            {row.action_anchor ? (
              <RowA anchor={row.action_anchor}>{t(row.tool ?? row.action_id)}</RowA>
            ) : (
              t(row.action_id)
            )}
            :{' '}
            <span class={failed ? 'fail' : 'okay'}>
              {failed ? `failed (${t(row.status)})` : t(row.status)}
            </span>
            {row.exit_code !== null ? ` · exit ${row.exit_code}` : ''}
            {duration(row.duration_ms)}
          </p>
          {row.error ? <p class="text fail">{keepLines(row.error)}</p> : null}
          <Output text={row.output} more={row.more_bytes} />
        </>
      );
    }
    case 'output':
      return (
        <>
          <Head row={row} kind="agent says" who={t(row.by)} whoClass={wc} />
          <p class="text">{keepLines(row.text)}</p>
          <Cut more={row.more_bytes} />
          <AttributionLine a={row.attribution} names={names} />
        </>
      );
    case 'turn_start':
      return (
        <>
          <Head row={row} kind="turn begins" who={t(row.by)} whoClass={wc} />
          <p class="row-body">
            {row.context === null
              ? 'No context recorded.'
              : row.context.length === 0
                ? 'Began having seen no message (recorded).'
                : `Context: ${row.context.length} message${row.context.length === 1 ? '' : 's'} (recorded).`}
          </p>
        </>
      );
    case 'turn_end':
      return (
        <>
          <Head row={row} kind="turn ends" who={t(row.by)} whoClass={wc} />
          <p class="row-body">
            Turn <code>{t(row.turn_id)}</code> ends:{' '}
            <span class={row.status === 'completed' ? 'okay' : 'fail'}>{t(row.status)}</span>
          </p>
          <UsageNote usage={row.usage} what="Turn usage" />
        </>
      );
    case 'note':
      return (
        <>
          <Head row={row} kind="note" who={t(row.author)} whoClass={wc} />
          <p class="text">{keepLines(row.text)}</p>
          <Cut more={row.more_bytes} />
          {row.usage ? <UsageNote usage={row.usage} what="Counted" /> : null}
        </>
      );
    case 'correction':
      return (
        <>
          <Head row={row} kind="correction" who={t(row.by)} whoClass={wc} />
          <p class="row-body">
            Corrects <code>{t(row.field)}</code> of <RowA anchor={row.target_anchor}>{t(row.target_id)}</RowA>
            : {row.was ? <code>{value(row.was.value)}</code> : 'the value before (shown at that row)'} →{' '}
            <code>{value(row.value)}</code>. By {t(row.by)}, because: {oneLine(row.reason)}
          </p>
          {row.refused ? <p class="fail">Not applied: {t(row.refused)}</p> : null}
        </>
      );
    case 'declared':
      return <DeclaredBody row={row} />;
    case 'quarantined':
      return (
        <>
          <Head row={row} kind="quarantined line" who={t(c.name(row.w))} whoClass={wc} />
          <p class="row-body">
            Line {row.line} of this writer's segment ({row.bytes.toLocaleString('en')} bytes) is not an event:{' '}
            <code>{row.code}</code>: {t(row.message)}. It is kept in the raw replay and left out of the merge.
          </p>
          <pre class="out">{t(row.excerpt)}</pre>
        </>
      );
    default:
      return (
        <>
          <Head row={row} kind={t(row.type)} who={t(row.by)} whoClass={wc} />
          <p class="row-body">
            <code>{t(row.summary)}</code>
          </p>
        </>
      );
  }
}

/** One row as an `<li>`. */
export function Row({ row, c, names }: { row: TimelineRow; c: Colours; names: Map<string, string> }) {
  const cls = `${row.kind === 'declared' ? '' : c.writer(row.w)} k-${row.kind}`;
  return (
    <li id={row.anchor} class={cls} data-kind={row.kind} data-pos={row.pos}>
      <RowBody row={row} c={c} names={names} />
      <Corrected row={row} />
      <Problems problems={row.problems} />
    </li>
  );
}

/** Consecutive rows of one turn, folded: the turn's start (when on this page) heads it. */
export function TurnGroup({
  rows,
  c,
  names,
}: {
  rows: TimelineRow[];
  c: Colours;
  names: Map<string, string>;
}) {
  const first = rows[0]!;
  const start = first.kind === 'turn_start' ? first : null;
  const end = rows.find((r) => r.kind === 'turn_end');
  const actions = rows.filter((r) => r.kind === 'action').length;
  const failed = rows.filter(
    (r) => r.kind === 'result' && (r.status !== 'ok' || (r.exit_code ?? 0) !== 0),
  ).length;
  const by = 'by' in first ? first.by : '';
  const rest = start ? rows.slice(1) : rows;
  return (
    <li class={`turn ${c.writer(first.w)}`} id={start ? start.anchor : undefined} data-turn={t(first.turn)}>
      <details class={`turn-box ${c.writer(first.w)}`} open>
        <summary>
          <span class={`chip ${c.writer(first.w)}`}>{t(by)}</span> Turn <code>{t(first.turn)}</code>
          {start ? '' : ' (continued)'}: {actions} action{actions === 1 ? '' : 's'}
          {failed ? `, ${failed} failed` : ''}
          {end && end.kind === 'turn_end' ? `, ended ${t(end.status)}` : ', not ended here'}
          {end && end.kind === 'turn_end' ? (
            <span class="turn-usage" title={COST_TITLE}>
              {' · '}
              {end.usage ? usageLine(end.usage) : 'usage unknown'}
            </span>
          ) : null}
        </summary>
        {start ? (
          <div class="turn-start" data-kind="turn_start" data-pos={start.pos}>
            <RowBody row={start} c={c} names={names} />
            <Corrected row={start} />
            <Problems problems={start.problems} />
          </div>
        ) : null}
        <ol class="tl">
          {rest.map((r) => (
            <Row row={r} c={c} names={names} />
          ))}
        </ol>
      </details>
    </li>
  );
}

/** `rows` as the timeline's list: runs of one turn folded, the rest one `<li>` each. */
export function Rows({
  rows,
  c,
  names,
}: {
  rows: readonly TimelineRow[];
  c: Colours;
  names: Map<string, string>;
}) {
  const out: Child[] = [];
  let day: string | null = null;
  for (let i = 0; i < rows.length; ) {
    const row = rows[i]!;
    // A heading where the date changes, and before the first row with a date.
    const d = dayOf(row.ts);
    if (d !== null && d !== day) {
      out.push(<DayHeading day={d} />);
      day = d;
    }
    if (row.turn === null) {
      out.push(<Row row={row} c={c} names={names} />);
      i += 1;
      continue;
    }
    let j = i + 1;
    while (j < rows.length && rows[j]!.turn === row.turn && rows[j]!.kind !== 'turn_start') j += 1;
    out.push(<TurnGroup rows={rows.slice(i, j)} c={c} names={names} />);
    i = j;
  }
  return (
    <ol class="tl" id="rows-list">
      {out}
    </ol>
  );
}
