/**
 * Names that look like another name on the same page (issue 25.6, docs/board.md "no name can pass for
 * another"): lib/log/format/names.ts finds them (`lookAlikes`: same UTS #39 skeleton, different NFC form) and
 * these pieces mark them where the board shows a name: `≈` and the code points that set the name apart,
 * with all of its code points in a title. Agents are compared with agents, people with people.
 */
import { type LookAlike, lookAlikes } from '../log/format/names.js';
import type { Overview } from '../service/board/overview-schemas.js';

/** Which overview a page is: all of the tenant's sessions, or one person's, or one agent's (./overview.tsx). */
export type OverviewView = { kind: 'all' } | { kind: 'person'; id: string } | { kind: 'agent'; id: string };

/**
 * The names of a page that look like another of its names (lib/log/format/names.ts `lookAlikes`), agents among
 * agents and people among people: what `LookAlikeMark` marks (issue 25.6, docs/board.md).
 */
export interface NameMarks {
  agents: ReadonlyMap<string, LookAlike>;
  people: ReadonlyMap<string, LookAlike>;
}

/** `NameMarks` of the agents and the people a page shows. */
export function nameMarks(agents: Iterable<string>, people: Iterable<string>): NameMarks {
  return { agents: lookAlikes(agents), people: lookAlikes(people) };
}

/** What a look-alike mark says after a name in plain text (a `<select>`'s option): ` ≈ U+0430`. */
export function lookAlikeText(mark: LookAlike | undefined): string {
  return mark ? ` ≈ ${mark.apart}` : '';
}

/**
 * After a name that looks like another on the page: `≈` and the code points that set it apart (`≈ U+0430`
 * for a Cyrillic а in `аlice` beside `alice`), every code point of the name in its title. Nothing for a
 * name without a twin.
 */
export function LookAlikeMark({ mark, kind }: { mark: LookAlike | undefined; kind: string }) {
  if (!mark) return null;
  return (
    <small
      class="look-alike"
      title={`looks like another ${kind} on this page; its code points: ${mark.codePoints}`}
    >
      {lookAlikeText(mark)}
    </small>
  );
}

/**
 * The look-alike marks of the names an overview page shows: its filters' options, its rows' agents and
 * people (and whose first prompts they are), and the view's own name.
 */
export function overviewMarks(o: Overview, view: OverviewView): NameMarks {
  const agents = [...o.facets.agents, ...o.rows.flatMap((r) => r.agents)];
  const people = [
    ...o.facets.people,
    ...o.rows.flatMap((r) => [...r.people, ...(r.asked ?? []).map((a) => a.user_id)]),
  ];
  if (view.kind === 'agent') agents.push(view.id);
  if (view.kind === 'person') people.push(view.id);
  return nameMarks(agents, people);
}

/** Under a person's or agent's heading whose name looks like another's on the page: which it is. */
export function ViewNameMark({ overview, view }: { overview: Overview; view: OverviewView }) {
  if (view.kind === 'all') return null;
  const marks = overviewMarks(overview, view);
  const kind = view.kind === 'agent' ? 'agent' : 'person';
  const mark = (view.kind === 'agent' ? marks.agents : marks.people).get(view.id);
  if (!mark) return null;
  return (
    <>
      {' '}
      <span class="look-alike-note">
        This {kind}'s name looks like another {kind}'s here
        <LookAlikeMark mark={mark} kind={kind} />: its code points are {mark.codePoints}.
      </span>
    </>
  );
}
