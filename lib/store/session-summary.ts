/**
 * The session summary's storage rules, shared by both adapters so they keep the same fields the same way
 * (ports.ts `SessionSummary`, issue 14.1): how a chunk's findings merge into what is stored, the bounds
 * that keep a DynamoDB session item small, and the default status summary of a record.
 */
import { cutText } from '../log/text-cut.js';
import type { AskedFirst, StatusRecord, StatusSummary, SummaryDelta } from './ports.js';

/** Longest title kept, in characters (UTF-16 units). */
export const TITLE_MAX = 160;
/** Most people and most agents kept per session. */
export const SUMMARY_NAMES_MAX = 20;
/** Longest user_id or agent name kept, in characters (longer ones are cut). */
export const SUMMARY_NAME_CHARS = 200;
/** Longest note kept in the index (a report's note is bounded by its schema; this bounds the item). */
export const SUMMARY_NOTE_CHARS = 2000;

/** The stored part of a summary a chunk can change. */
export interface StoredSummaryNames {
  title: string | null;
  /** the title message's ts, µs since the epoch */
  title_at: number | null;
  people: string[];
  agents: string[];
  /** each kept person's first prompt, in the order of `people` */
  asked: AskedFirst[];
}

/**
 * `cur` with `delta` added: the earlier title wins (a tie keeps the stored one), and new names are
 * appended in order, made well-formed and cut to `SUMMARY_NAME_CHARS` on a character boundary
 * (lib/log/text-cut.ts), until `SUMMARY_NAMES_MAX`. Each person's first prompt
 * (`asked`) follows the title's rule per person, and only for the people kept, so it holds at most
 * `SUMMARY_NAMES_MAX` entries of `TITLE_MAX` characters. Null when nothing changes, so an adapter can
 * skip the write (most chunks repeat the people already known and bring no earlier prompt).
 */
export function mergeSummary(cur: StoredSummaryNames, delta: SummaryDelta): StoredSummaryNames | null {
  let changed = false;
  let { title, title_at } = cur;
  if (delta.title && (title_at === null || delta.title.at < title_at)) {
    title = cutText(delta.title.text, TITLE_MAX);
    title_at = delta.title.at;
    changed = true;
  }
  const add = (have: string[], more: string[]): string[] => {
    const out = [...have];
    for (const raw of more) {
      if (out.length >= SUMMARY_NAMES_MAX) break;
      const name = cutText(raw, SUMMARY_NAME_CHARS);
      if (name === '' || out.includes(name)) continue;
      out.push(name);
      changed = true;
    }
    return out;
  };
  const people = add(cur.people, delta.people);
  const agents = add(cur.agents, delta.agents);
  const firsts = new Map(cur.asked.map((a) => [a.user_id, a]));
  for (const a of delta.asked ?? []) {
    const who = cutText(a.user_id, SUMMARY_NAME_CHARS);
    const have = firsts.get(who);
    if (!people.includes(who) || (have && have.at <= a.at)) continue;
    firsts.set(who, { user_id: who, text: cutText(a.text, TITLE_MAX), at: a.at });
    changed = true;
  }
  // in the order of `people`, whatever order the entries came in
  const asked = people.flatMap((p) => firsts.get(p) ?? []);
  return changed ? { title, title_at, people, agents, asked } : null;
}

/** A stored `asked` (JSON or a DynamoDB list) read back; anything malformed is left out, absent is []. */
export function askedOf(v: unknown): AskedFirst[] {
  if (!Array.isArray(v)) return [];
  return (v as Array<Record<string, unknown> | null>).flatMap((a) =>
    a !== null &&
    typeof a === 'object' &&
    typeof a.user_id === 'string' &&
    typeof a.text === 'string' &&
    typeof a.at === 'number'
      ? [{ user_id: a.user_id, text: a.text, at: a.at }]
      : [],
  );
}

/** Whether a delta carries anything at all (ingest skips the store call for chunks that do not). */
export function isEmptyDelta(delta: SummaryDelta): boolean {
  return (
    delta.title === null &&
    delta.people.length === 0 &&
    delta.agents.length === 0 &&
    (delta.asked ?? []).length === 0
  );
}

/**
 * What the session index keeps of a status record: the last report's state, note and time, and
 * `state_since` the record's own, else (a record from before it) the first report of the trailing run of
 * that state among the kept reports.
 */
export function statusSummaryOf(s: StatusRecord): StatusSummary {
  const last = s.reports.at(-1)!;
  let since = last.reported_at;
  for (let i = s.reports.length - 1; i >= 0 && s.reports[i]!.state === last.state; i--) {
    since = s.reports[i]!.reported_at;
  }
  return {
    state: last.state,
    state_since: s.state_since ?? since,
    note: cutText(last.note, SUMMARY_NOTE_CHARS),
    reported_at: last.reported_at,
  };
}
