/**
 * What one event of a chunk adds to its session's board summary (issue 14.1, ports.ts `SummaryDelta`):
 * ingest's scan (lib/service/ingest/ingest-chunk.ts) keeps the chunk's events that matter (`SUMMARY_TYPES`) and calls
 * `summarizeChunk`, which applies the chunk's own `user_id` corrections and calls `addToSummary` per event.
 */
import { nameForm } from '../../log/format/names.js';
import { cutText } from '../../log/format/text-cut.js';
import type { SummaryDelta } from '../../store/index.js';
import { FIX_TARGET_ID_MAX, summaryName, TITLE_MAX } from '../../store/session-summary.js';

/** The first line of a message's text, trimmed, at most `TITLE_MAX` characters; null when blank. */
export function titleOf(text: string): string | null {
  const line = text.trimStart().split(/\r?\n/, 1)[0]!.trim();
  return line === '' ? null : cutText(line, TITLE_MAX);
}

/**
 * A summary delta's part of one parsed event (message, participant.join, writer.start, and a correction
 * of a `text` field, which the title and `asked` follow). `at` is the event's own ts (µs, null when it does
 * not parse); `mergeAt`, `w` and `seq` place a correction in merged order: `mergeAt` is the merge key,
 * the writer's running maximum ts at the event (lib/log/read/merge.ts; 0 when no ts came before it).
 */
export function addToSummary(
  delta: SummaryDelta,
  type: string,
  obj: Record<string, unknown>,
  at: number | null,
  w: string,
  seq: number,
  mergeAt: number,
): void {
  // Names in NFC (lib/log/format/names.ts): `José` precomposed and with a combining accent are one person.
  if (type === 'message' || type === 'participant.join') {
    const who = typeof obj.user_id === 'string' ? nameForm(obj.user_id) : '';
    if (who !== '' && !delta.people.includes(who)) delta.people.push(who);
  }
  if (type === 'message' && typeof obj.text === 'string' && at !== null) {
    const text = titleOf(obj.text);
    const id = typeof obj.id === 'string' ? obj.id : undefined;
    if (text !== null && (delta.title === null || at < delta.title.at))
      delta.title = id === undefined ? { text, at } : { text, at, id };
    // what this person asked first (the person's own title, issue 14.4)
    const who = typeof obj.user_id === 'string' ? nameForm(obj.user_id) : '';
    if (text !== null && who !== '') {
      delta.asked ??= [];
      const asked = delta.asked;
      const have = asked.findIndex((a) => a.user_id === who);
      const first = id === undefined ? { user_id: who, text, at } : { user_id: who, text, at, id };
      if (have === -1) asked.push(first);
      else if (at < asked[have]!.at) asked[have] = first;
    }
  }
  // A correction is placed by its merge key (`mergeAt`), not its own ts: one whose ts does not parse is
  // applied by the timeline too (lib/log/read/merge.ts), so the title follows it (board-title-fix-badts).
  // A target_id no event id can be is not kept (`FIX_TARGET_ID_MAX`), and the value is cut to the title.
  if (
    type === 'correction' &&
    obj.field === 'text' &&
    typeof obj.target_id === 'string' &&
    obj.target_id !== '' &&
    obj.target_id.length <= FIX_TARGET_ID_MAX &&
    typeof obj.value === 'string'
  ) {
    delta.fixes ??= [];
    delta.fixes.push({ id: obj.target_id, text: titleOf(obj.value), ts: mergeAt, w, seq });
  }
  if (type === 'writer.start') {
    const meta = obj.meta as Record<string, unknown> | undefined;
    const agent = meta && typeof meta.agent === 'string' && meta.agent !== '' ? summaryName(meta.agent) : '';
    if (agent !== '' && !delta.agents.includes(agent)) delta.agents.push(agent);
  }
}

/** The event types the summary reads: ingest keeps only these for `summarizeChunk`. */
export const SUMMARY_TYPES: ReadonlySet<string> = new Set([
  'message',
  'participant.join',
  'correction',
  'writer.start',
]);

/** One parsed event of a chunk as `summarizeChunk` takes it (the arguments of `addToSummary`). */
export interface SummaryEvent {
  type: string;
  obj: Record<string, unknown>;
  /** the event's own ts, µs since the epoch; null when it does not parse */
  at: number | null;
  seq: number;
  /** the merge key: the writer's running maximum ts at the event (0 when none came before it) */
  mergeAt: number;
}

/**
 * Adds one chunk's events (all of writer `w`, in seq order) to `delta`, each message and join under its
 * effective `user_id`: the last `user_id` correction of it in this chunk, in merged order (`(mergeAt, seq)`
 * within one writer, as the `text` fixes are ordered), wins, so people and `asked` name the person the
 * timeline shows (test/attack/board-correction-user). The others (their message is in another chunk) go
 * to `delta.users`, which moves a tracked `asked` entry (session-summary.ts `mergeSummary`).
 */
export function summarizeChunk(delta: SummaryDelta, events: readonly SummaryEvent[], w: string): void {
  const who = new Map<string, { value: string; mergeAt: number; seq: number }>();
  for (const e of events) {
    const { field, target_id: id, value } = e.obj;
    if (e.type !== 'correction' || field !== 'user_id' || typeof id !== 'string' || typeof value !== 'string')
      continue;
    const have = who.get(id);
    if (!have || have.mergeAt < e.mergeAt || (have.mergeAt === e.mergeAt && have.seq < e.seq))
      who.set(id, { value, mergeAt: e.mergeAt, seq: e.seq });
  }
  const here = new Set<string>();
  for (const e of events) {
    const id = (e.type === 'message' || e.type === 'participant.join') && e.obj.id;
    if (typeof id === 'string') here.add(id);
    const fix = typeof id === 'string' ? who.get(id) : undefined;
    const obj = fix ? { ...e.obj, user_id: fix.value } : e.obj;
    addToSummary(delta, e.type, obj, e.at, w, e.seq, e.mergeAt);
  }
  for (const [id, fix] of who) {
    if (here.has(id) || id === '' || id.length > FIX_TARGET_ID_MAX) continue;
    delta.users ??= [];
    delta.users.push({ id, user_id: fix.value, ts: fix.mergeAt, w, seq: fix.seq });
  }
}
