/**
 * What is searchable (issue 30 item 1): the documents a segment's events make, and those a session's
 * status reports and work items make. Always the text as stored (writers redact before they write; the
 * server adds nothing), escaped as the timeline shows it, and never more than the timeline shows of it:
 *
 * | event | type | field | text |
 * |---|---|---|---|
 * | `message` | message | text | the message; person = its `user_id` |
 * | `agent.output` | output | text | the output; agent = the writer's; person = that of its recorded cause (`caused_by`, else its turn's context) |
 * | `agent.action` | action | input | the one-line input summary the timeline shows (command, path, JSON); tool |
 * | `note` | note | text | the note; person = its `author` |
 * | `correction` | correction | value | the corrected value; agent = the writer's (the target is found by the value too: `SearchFix`) |
 * | status report | report | note | the report's note (row `d-<i>` of the timeline) |
 * | work item | report | summary | the item's one-line summary; agent = its actor |
 *
 * Not searchable: action results' output (tool output is bulk, often a file's contents, and is not the
 * agent's words), `writer.start` meta, joins, turn bounds, unknown types and lines that do not parse.
 * The names (agent, person, tool) are in each document's terms, so a bare `priya` finds her messages.
 */
import { isUtf8 } from 'node:buffer';
import type { SearchDocType } from '../../contract/search.js';
import { decodeEvent, parseLine, type RecordedEvent } from '../../log/format/codec.js';
import { escapeControl } from '../../log/format/escape.js';
import { parseTs } from '../../log/format/time.js';
import type { StatusRecord, WorkItem } from '../../store/index.js';
import type { SearchCause, SearchDoc, SearchFix } from '../../store/search.js';
import { SEARCH_TEXT_MAX } from '../../store/search.js';
import { inputSummary, keepLines, oneLine } from '../timeline/text.js';
import { termsColumn, termsOf } from './terms.js';

/** Text cut to `SEARCH_TEXT_MAX` characters (never inside a surrogate pair), controls escaped. */
export function searchText(s: string): string {
  let t = keepLines(s);
  if (t.length > SEARCH_TEXT_MAX) {
    t = t.slice(0, SEARCH_TEXT_MAX);
    if (/[\uD800-\uDBFF]$/.test(t)) t = t.slice(0, -1);
  }
  return t;
}

/**
 * What a writer's documents share: its agent (`meta.agent` of its writer.start, as the writer index keeps
 * it). Display names are not kept: a join may be in an earlier chunk than the message, and indexing as the
 * chunks arrive must give what a reindex gives, so `person:` matches the user_id, as the board's filter.
 */
export interface WriterFacts {
  agent: string | null;
}

/** A correction's value as the text of `field`: an input's summary, a string as it is; null: not text. */
export function fixText(field: string, value: unknown): string | null {
  if (field === 'input') return searchText(inputSummary(value));
  return typeof value === 'string' ? searchText(value) : null;
}

function doc(
  ev: RecordedEvent & { id: string },
  type: SearchDocType,
  field: string,
  text: string,
  facets: Pick<SearchDoc, 'agent' | 'person' | 'person_name' | 'tool' | 'cause'>,
): SearchDoc {
  const t = searchText(text);
  return {
    sid: ev.sid,
    w: ev.w,
    seq: ev.seq,
    id: ev.id,
    ts: ev.ts,
    at_us: ev.tsMicros,
    type,
    field,
    ...facets,
    text: t,
    terms: termsColumn(t, facets.tool, facets.agent, facets.person, facets.person_name),
  };
}

const NO_FACETS = { agent: null, person: null, person_name: null, tool: null, cause: null };

/** The fields the documents of events are made of (`SearchDoc.field` of this table's event rows). */
const EVENT_FIELDS: ReadonlySet<string> = new Set(['text', 'input', 'value']);

/**
 * The documents and fixes of one recorded event (see the module's table); none for the rest.
 * Never throws.
 */
export function docsOfEvent(
  rec: RecordedEvent,
  facts: WriterFacts,
): { docs: SearchDoc[]; fixes: SearchFix[]; causes: SearchCause[] } {
  const ev = decodeEvent(rec);
  const none = { docs: [], fixes: [], causes: [] };
  if ('unknown' in ev || typeof rec.id !== 'string') return none;
  const r = rec as RecordedEvent & { id: string };
  switch (ev.type) {
    case 'message':
      return {
        docs: [
          doc(r, 'message', 'text', ev.text, {
            ...NO_FACETS,
            person: ev.user_id || null,
          }),
        ],
        fixes: [],
        causes: [],
      };
    case 'turn.start':
      // The messages the turn began with: the person of an agent event of the turn that records no
      // `caused_by` of its own (replay's `recorded_context`).
      return {
        docs: [],
        fixes: [],
        causes: (ev.context_message_ids ?? []).map((m) => ({
          sid: r.sid,
          key: `t:${ev.turn_id}`,
          message_id: m,
        })),
      };
    case 'agent.output': {
      const c = causeOf(r, ev.turn_id, ev.caused_by);
      return {
        docs: [doc(r, 'output', 'text', ev.text, { ...NO_FACETS, agent: facts.agent, cause: c.key })],
        fixes: [],
        causes: c.causes,
      };
    }
    case 'agent.action': {
      const c = causeOf(r, ev.turn_id, ev.caused_by);
      return {
        docs: [
          doc(r, 'action', 'input', inputSummary(ev.input), {
            ...NO_FACETS,
            agent: facts.agent,
            tool: ev.tool || null,
            cause: c.key,
          }),
        ],
        fixes: [],
        causes: c.causes,
      };
    }
    case 'note':
      return {
        docs: [
          doc(r, 'note', 'text', ev.text, {
            ...NO_FACETS,
            person: ev.author || null,
          }),
        ],
        fixes: [],
        causes: [],
      };
    case 'correction': {
      const text = fixText(ev.field, ev.value);
      if (text === null) return none;
      // Only the fields event documents are made of: a report's `note` or a work item's `summary` is no
      // event's field, and the replay applies no correction to them (SEARCH-FIX-REPORT,
      // test/attack/search-corrections.test.ts); the correction's own row is found by its value still.
      if (!EVENT_FIELDS.has(ev.field)) {
        return {
          docs: [doc(r, 'correction', 'value', text, { ...NO_FACETS, agent: facts.agent })],
          fixes: [],
          causes: [],
        };
      }
      const fix: SearchFix = {
        sid: r.sid,
        target_id: ev.target_id,
        field: ev.field,
        text,
        terms: termsOf(text).join(' '),
        at_us: r.tsMicros,
        w: r.w,
        seq: r.seq,
        by: r.id,
      };
      return {
        docs: [doc(r, 'correction', 'value', text, { ...NO_FACETS, agent: facts.agent })],
        fixes: [fix],
        causes: [],
      };
    }
    default:
      return none;
  }
}

/**
 * An agent event's recorded cause (lib/log/replay/attribution.ts bases 1-4): its own `caused_by` when it
 * lists messages (filed under `e:<id>`), none when it is `[]` (recorded: nothing caused it), else its
 * turn's context (`t:<turn_id>`, filed by the turn's `turn.start`). Inferred attribution (temporal,
 * cascade) is not a recorded fact and makes no person here.
 */
function causeOf(
  r: RecordedEvent & { id: string },
  turnId: string,
  causedBy: readonly string[] | null | undefined,
): { key: string | null; causes: SearchCause[] } {
  if (causedBy === null || causedBy === undefined) {
    return { key: turnId ? `t:${turnId}` : null, causes: [] };
  }
  if (causedBy.length === 0) return { key: null, causes: [] };
  const key = `e:${r.id}`;
  return { key, causes: [...new Set(causedBy)].map((m) => ({ sid: r.sid, key, message_id: m })) };
}

/** One complete line of a segment as an event, or null when it does not parse (quarantined, not searched). */
export function recordOf(line: Uint8Array, offset: number): RecordedEvent | null {
  if (!isUtf8(line)) return null;
  const parsed = parseLine(line, 0, offset);
  return parsed.ok ? parsed.event : null;
}

/**
 * The documents of a session's status reports and work items (type `report`), ids `d-<i>` (the
 * timeline's row of report `i`) and the work item's id; `w` is '' (no writer wrote them).
 */
export function reportDocs(sid: string, status: StatusRecord | null, work: readonly WorkItem[]): SearchDoc[] {
  const out: SearchDoc[] = [];
  const base = {
    sid,
    w: '',
    type: 'report' as const,
    person: null,
    person_name: null,
    tool: null,
    cause: null,
  };
  status?.reports.forEach((r, i) => {
    if (!r.note) return;
    const text = searchText(r.note);
    out.push({
      ...base,
      seq: i + 1,
      id: `d-${i}`,
      ts: r.reported_at,
      at_us: parseTs(r.reported_at)?.micros ?? null,
      field: 'note',
      agent: null,
      text,
      terms: termsColumn(text, r.state),
    });
  });
  work.forEach((item, i) => {
    if (!item.summary) return;
    const text = searchText(item.summary);
    const agent = escapeControl(oneLine(item.actor, 200));
    out.push({
      ...base,
      seq: 100_000 + i,
      id: item.id,
      ts: item.started_at,
      at_us: parseTs(item.started_at)?.micros ?? null,
      field: 'summary',
      agent,
      text,
      terms: termsColumn(text, agent, item.system),
    });
  });
  return out;
}
