/**
 * What one event of a chunk adds to its session's board summary (issue 14.1, ports.ts `SummaryDelta`):
 * ingest's scan (lib/service/ingest.ts) calls `addToSummary` for each parsed line.
 */
import { cutText } from '../log/text-cut.js';
import type { SummaryDelta } from '../store/index.js';
import { FIX_TARGET_ID_MAX, SUMMARY_NAME_CHARS, TITLE_MAX } from '../store/session-summary.js';

/** The first line of a message's text, trimmed, at most `TITLE_MAX` characters; null when blank. */
export function titleOf(text: string): string | null {
  const line = text.trimStart().split(/\r?\n/, 1)[0]!.trim();
  return line === '' ? null : cutText(line, TITLE_MAX);
}

/**
 * A summary delta's part of one parsed event (message, participant.join, writer.start, and a correction
 * of a `text` field, which the title and `asked` follow). `at` is the event's own ts (µs, null when it does
 * not parse); `mergeAt`, `w` and `seq` place a correction in merged order: `mergeAt` is the merge key,
 * the writer's running maximum ts at the event (lib/log/merge.ts; 0 when no ts came before it).
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
  if (type === 'message' || type === 'participant.join') {
    const who = obj.user_id;
    if (typeof who === 'string' && who !== '' && !delta.people.includes(who)) delta.people.push(who);
  }
  if (type === 'message' && typeof obj.text === 'string' && at !== null) {
    const text = titleOf(obj.text);
    const id = typeof obj.id === 'string' ? obj.id : undefined;
    if (text !== null && (delta.title === null || at < delta.title.at))
      delta.title = id === undefined ? { text, at } : { text, at, id };
    // what this person asked first (the person's own title, issue 14.4)
    const who = obj.user_id;
    if (text !== null && typeof who === 'string' && who !== '') {
      delta.asked ??= [];
      const asked = delta.asked;
      const have = asked.findIndex((a) => a.user_id === who);
      const first = id === undefined ? { user_id: who, text, at } : { user_id: who, text, at, id };
      if (have === -1) asked.push(first);
      else if (at < asked[have]!.at) asked[have] = first;
    }
  }
  // A correction is placed by its merge key (`mergeAt`), not its own ts: one whose ts does not parse is
  // applied by the timeline too (lib/log/merge.ts), so the title follows it (board2-title-fix-badts).
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
    if (meta && typeof meta.agent === 'string' && meta.agent !== '' && !delta.agents.includes(meta.agent))
      delta.agents.push(cutText(meta.agent, SUMMARY_NAME_CHARS));
  }
}
