/**
 * The session summary's storage rules, shared by both adapters so they keep the same fields the same way
 * (sessions.ts `SessionSummary`, issue 14.1): how a chunk's findings merge into what is stored, the bounds
 * that keep a DynamoDB session item small, and the default status summary of a record.
 */

import { z } from 'zod';
import { nameForm } from '../log/format/names.js';
import { cutText } from '../log/format/text-cut.js';
import { AskedFirst, SessionSummary, type SummaryDelta, TextFix, type UserFix } from './sessions.js';
import type { StatusRecord, StatusSummary } from './status.js';

/** Longest title kept, in characters (UTF-16 units). */
export const TITLE_MAX = 160;
/** Most people and most agents kept per session. */
export const SUMMARY_NAMES_MAX = 20;
/**
 * Longest user_id or agent name kept in a summary, in UTF-16 units (longer ones are cut on a character
 * boundary), in NFC (lib/log/format/names.ts: canonically equivalent names are one name). 64, not the 200 a writer record keeps: the overview lists every summary of the tenant on each
 * request, so what each keeps bounds the work of all (issue 14, test/attack/board-bloated-summaries).
 */
export const SUMMARY_NAME_CHARS = 64;
/** Longest note kept in the index (a report's note is bounded by its schema; this bounds the item). */
export const SUMMARY_NOTE_CHARS = 2000;

/** A user_id or agent name as a summary keeps it: NFC, well-formed, at most `SUMMARY_NAME_CHARS` units. */
export function summaryName(raw: string): string {
  return cutText(nameForm(raw), SUMMARY_NAME_CHARS);
}

/** The stored part of a summary a chunk can change: `SessionSummary`'s names, and what merges them. */
export const StoredSummaryNames = SessionSummary.pick({ title: true, people: true, agents: true }).extend({
  /** the title message's ts, µs since the epoch */
  title_at: z.number().nullable(),
  /** each kept person's first prompt, in the order of `people` */
  asked: z.array(AskedFirst),
  /** the title message's id (null: none, or a title written before ids were kept) */
  title_id: z.string().nullable(),
  /** corrections of `text` kept: those of the title's and `asked`'s messages, and `FIXES_PENDING_MAX` others */
  fixes: z.array(TextFix),
});
export type StoredSummaryNames = z.infer<typeof StoredSummaryNames>;

/**
 * Corrections kept whose target is not (yet) the title or an `asked` message: a correction may arrive
 * before its message (another writer's chunk), so a few wait for it; the latest in merged order stay.
 */
export const FIXES_PENDING_MAX = 20;

/**
 * Longest correction `target_id` a summary keeps, in UTF-16 units: event ids are `e_`/`m_` and a ULID
 * (28), so no longer one names an event; keeping none bounds `fixes` in bytes (test/attack/board-fixes-bloat:
 * 1 MB ids made every later merge of the session re-parse 20 MB). With texts cut to `TITLE_MAX`, `fixes`
 * holds at most 1 + `SUMMARY_NAMES_MAX` + `FIXES_PENDING_MAX` + 1 entries of well under 1 KB each.
 */
export const FIX_TARGET_ID_MAX = 64;

/**
 * The id of the marker entry in `fixes` saying some pending correction was dropped (`FIXES_PENDING_MAX`).
 * Empty: no event id is (`addToSummary` keeps no correction of an empty target_id).
 */
const DROPPED_ID = '';

/** Whether a correction may be kept: its target can be an event id. */
function keepable(f: TextFix): boolean {
  return f.id !== DROPPED_ID && f.id.length <= FIX_TARGET_ID_MAX;
}

/** Merged order of two corrections (lib/log/replay/corrections.ts: by `(ts, w, seq)`, the last one wins). */
function fixOrder(a: TextFix | UserFix, b: TextFix | UserFix): number {
  return a.ts - b.ts || (a.w < b.w ? -1 : a.w > b.w ? 1 : 0) || a.seq - b.seq;
}

/**
 * `cur` with `delta` added: the earlier title wins (a tie keeps the stored one), and new names are
 * appended in order, in NFC, made well-formed and cut to `SUMMARY_NAME_CHARS` on a character boundary
 * (`summaryName`; a name equal in NFC to one kept, as an older summary may hold it, is that name), until `SUMMARY_NAMES_MAX`. Each person's first prompt
 * (`asked`) follows the title's rule per person, and only for the people kept, so it holds at most
 * `SUMMARY_NAMES_MAX` entries of `TITLE_MAX` characters. Null when nothing changes, so an adapter can
 * skip the write (most chunks repeat the people already known and bring no earlier prompt).
 * The title and each `asked` text follow the corrections of their message's `text` (seed 001: the last in
 * merged order wins), whichever chunk brings the correction, before or after the message: the title is
 * the first prompt as corrected (docs/board.md).
 */
export function mergeSummary(cur: StoredSummaryNames, delta: SummaryDelta): StoredSummaryNames | null {
  let changed = false;
  let { title, title_at, title_id } = cur;
  // Once a pending correction was dropped, a text with no kept correction may be one it corrected: such
  // texts are withheld (title null, `asked` text '') rather than shown uncorrected (board-title-pending).
  let dropped = cur.fixes.some((f) => f.id === DROPPED_ID);
  const fixes = new Map(cur.fixes.filter(keepable).map((f) => [f.id, f]));
  for (const f of delta.fixes ?? []) {
    if (!keepable(f)) continue;
    const have = fixes.get(f.id);
    if (have && fixOrder(have, f) >= 0) continue;
    fixes.set(f.id, { ...f, text: f.text === null ? null : cutText(f.text, TITLE_MAX) });
    changed = true;
  }
  /** The text a message's title shows: its latest correction's, else `text`. */
  const shown = (id: string | null | undefined, text: string | null): string | null => {
    const fix = id ? fixes.get(id) : undefined;
    return fix ? fix.text : dropped ? null : text;
  };
  if (delta.title && (title_at === null || delta.title.at < title_at)) {
    title = cutText(delta.title.text, TITLE_MAX);
    title_at = delta.title.at;
    title_id = delta.title.id ?? null;
    changed = true;
  }
  const fixedTitle = shown(title_id, title);
  if (fixedTitle !== title) {
    title = fixedTitle;
    changed = true;
  }
  const add = (have: string[], more: string[]): string[] => {
    const out = [...have];
    for (const raw of more) {
      if (out.length >= SUMMARY_NAMES_MAX) break;
      const name = summaryName(raw);
      if (name === '' || out.some((n) => n === name || nameForm(n) === name)) continue;
      out.push(name);
      changed = true;
    }
    return out;
  };
  const firsts = new Map(cur.asked.map((a) => [a.user_id, a]));
  // A later chunk's correction of a tracked first prompt's user_id moves it to the corrected person, who
  // joins people. The old name stays: the summary cannot know whether it came from nothing else (another
  // message or join of theirs). Only this delta's corrections are ordered (no user_id correction is
  // stored), so one from another writer that is earlier in merged order but arrives later still wins.
  const lastUser = new Map<string, UserFix>();
  for (const u of [...(delta.users ?? [])].sort(fixOrder)) lastUser.set(u.id, u);
  const moved: string[] = [];
  for (const u of lastUser.values()) {
    const who = summaryName(u.user_id);
    const from = [...firsts.values()].find((a) => a.id !== undefined && a.id === u.id);
    if (!from || who === '' || from.user_id === who) continue;
    firsts.delete(from.user_id);
    const have = firsts.get(who);
    if (!have || from.at < have.at) firsts.set(who, { ...from, user_id: who });
    moved.push(who);
    changed = true;
  }
  const people = add(cur.people, [...delta.people, ...moved]);
  const agents = add(cur.agents, delta.agents);
  for (const a of delta.asked ?? []) {
    const who = summaryName(a.user_id);
    const have = firsts.get(who);
    if (!people.includes(who) || (have && have.at <= a.at)) continue;
    const text = cutText(a.text, TITLE_MAX);
    firsts.set(
      who,
      a.id === undefined ? { user_id: who, text, at: a.at } : { user_id: who, text, at: a.at, id: a.id },
    );
    changed = true;
  }
  for (const [who, a] of firsts) {
    const fixed = shown(a.id, a.text) ?? '';
    if (fixed !== a.text) {
      firsts.set(who, { ...a, text: fixed });
      changed = true;
    }
  }
  // in the order of `people`, whatever order the entries came in
  const asked = people.flatMap((p) => firsts.get(p) ?? []);
  if (!changed) return null;
  // Keep the corrections of what is shown, and the latest few others (their message may come later).
  const shownIds = new Set([title_id, ...asked.map((a) => a.id)]);
  const kept = [...fixes.values()].filter((f) => shownIds.has(f.id));
  const pending = [...fixes.values()].filter((f) => !shownIds.has(f.id)).sort(fixOrder);
  kept.push(...pending.slice(-FIXES_PENDING_MAX));
  if (pending.length > FIXES_PENDING_MAX) dropped = true;
  if (dropped) kept.push({ id: DROPPED_ID, text: null, ts: 0, w: '', seq: 0 });
  return withheld({ title, title_at, people, agents, asked, title_id, fixes: kept }, dropped);
}

/**
 * `s` with, when a pending correction was dropped, every text that has no kept correction withheld: the
 * title null and such an `asked` text '' (the dropped one may have corrected it).
 */
function withheld(s: StoredSummaryNames, dropped: boolean): StoredSummaryNames {
  if (!dropped) return s;
  const fixed = new Set(s.fixes.map((f) => f.id));
  const has = (id: string | null | undefined) => id != null && fixed.has(id);
  return {
    ...s,
    title: has(s.title_id) ? s.title : null,
    asked: s.asked.map((a) => (has(a.id) ? a : { ...a, text: '' })),
  };
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
      ? [
          typeof a.id === 'string'
            ? { user_id: a.user_id, text: a.text, at: a.at, id: a.id }
            : { user_id: a.user_id, text: a.text, at: a.at },
        ]
      : [],
  );
}

/** Stored `fixes` (JSON or a DynamoDB list) read back; anything malformed is left out, absent is []. */
export function fixesOf(v: unknown): TextFix[] {
  if (!Array.isArray(v)) return [];
  return (v as Array<Record<string, unknown> | null>).flatMap((f) =>
    f !== null &&
    typeof f === 'object' &&
    typeof f.id === 'string' &&
    (typeof f.text === 'string' || f.text === null) &&
    typeof f.ts === 'number' &&
    typeof f.w === 'string' &&
    typeof f.seq === 'number'
      ? [{ id: f.id, text: f.text as string | null, ts: f.ts, w: f.w, seq: f.seq }]
      : [],
  );
}

/** Whether a delta carries anything at all (ingest skips the store call for chunks that do not). */
export function isEmptyDelta(delta: SummaryDelta): boolean {
  return (
    delta.title === null &&
    delta.people.length === 0 &&
    delta.agents.length === 0 &&
    (delta.asked ?? []).length === 0 &&
    (delta.fixes ?? []).length === 0 &&
    (delta.users ?? []).length === 0
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
