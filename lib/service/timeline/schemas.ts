/**
 * The shapes of a session's structured timeline (issue 14.3): the rows the board's session page shows,
 * made by `lib/service/timeline/page.ts` from the merged transcript with corrections applied (seed 001, DESIGN
 * §3), the agents' declared status reports (seed 000) and verify's findings (docs/verify.md). Plain types:
 * no HTTP answer carries them, the page renders them (lib/board/timeline.tsx).
 *
 * Text in rows is as written (no HTML escaping: hono/jsx does that), except where a field says "escaped":
 * then control, bidi and separator characters are already shown as visible escapes (`escapeControl`).
 */

import type { StatusView } from '../../contract/status.js';
import type { Problem } from '../../log/analyse/verify.js';
import type { AttributionBasis } from '../../log/replay/attribution.js';

/** A verify finding placed at the row (or writer) it concerns. */
export type TimelineProblem = Pick<Problem, 'severity' | 'code' | 'message' | 'w' | 'seq' | 'line'>;

/** A correction that changed a row, as the corrected row shows it. */
export interface CorrectionMark {
  field: string;
  /** the correction event's id and anchor */
  by: string;
  by_anchor: string;
  /** the value before this correction */
  was: unknown;
  reason: string;
}

/** A message an action or output is attributed to. */
export interface AttributedMessage {
  id: string;
  /** `e-…` of its row, when the message was read (always, unless its id names no message of the session) */
  anchor: string | null;
  user_id: string | null;
  /** the message's ts, when it was read */
  ts: string | null;
}

/** The Attributor's answer for one action or output (lib/log/replay/attribution.ts, docs/attribution.md). */
export interface RowAttribution {
  basis: AttributionBasis;
  confidence: number;
  messages: AttributedMessage[];
  /** contested: each person with their messages */
  candidates?: { user_id: string; messages: AttributedMessage[]; confidence: number }[];
  /** cascade: the earlier action inherited from */
  cascade_from?: { id: string; anchor: string };
}

/** Token usage and list-price cost of a turn or one usage record (lib/log/analyse/usage/, docs/usage.md). */
export interface RowUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** list price equivalent in USD; null when none of it has a list price */
  cost_usd: number | null;
  /** what a vendor reported itself (kept beside, never added), USD; null: none */
  reported_cost_usd: number | null;
  /** usage records counted, and of those without a list price */
  records: number;
  unpriced_records: number;
  /** the models the records name */
  models: string[];
}

/** What every row has. */
interface RowBase {
  /** position in the whole timeline (0-based, every row kind counted): `?after=` pages by it */
  pos: number;
  /** the row's HTML id: `e-<event id>` for events (a repeated id gets `-<pos>`), `q-…`, `d-…` */
  anchor: string;
  /** the event's ts as written (declared rows: when reported) */
  ts: string;
  /** the writer (segment) it comes from; null for a declared row */
  w: string | null;
  /** the turn it belongs to, for folding (its turn_id), or null */
  turn: string | null;
  /** verify findings about this row */
  problems: TimelineProblem[];
  /** corrections that changed it (its fields show the corrected values) */
  corrected?: CorrectionMark[];
}

export type TimelineRow = RowBase &
  (
    | {
        kind: 'writer_start';
        id: string;
        name: string;
        agent: string | null;
        app: string | null;
        host: string | null;
      }
    | { kind: 'writer_end'; id: string; name: string; reason: string | null }
    | { kind: 'join' | 'leave'; id: string; user_id: string; display_name: string | null }
    | { kind: 'message'; id: string; user_id: string; name: string; text: string; more_bytes: number }
    | { kind: 'turn_start'; id: string; turn_id: string; by: string; context: string[] | null }
    | {
        kind: 'turn_end';
        id: string;
        turn_id: string;
        by: string;
        status: string;
        /** the turn's usage recorded up to its end (docs/usage.md); null: none recorded (unknown) */
        usage: RowUsage | null;
      }
    | {
        kind: 'action';
        id: string;
        by: string;
        tool: string;
        /** one line, ≤ 200 characters, escaped: the command, the file path, or compact JSON */
        summary: string;
        attribution: RowAttribution | null;
      }
    | {
        kind: 'result';
        id: string;
        by: string;
        action_id: string;
        /** the action's anchor and tool, when the action was read before its result */
        action_anchor: string | null;
        tool: string | null;
        status: string;
        exit_code: number | null;
        error: string | null;
        /** the output, at most 2 KB (UTF-8) */
        output: string;
        more_bytes: number;
        /** result ts − action ts, in ms; null when either ts is not a timestamp or the action is unknown */
        duration_ms: number | null;
      }
    | {
        kind: 'output';
        id: string;
        by: string;
        text: string;
        more_bytes: number;
        attribution: RowAttribution | null;
      }
    | {
        kind: 'note';
        id: string;
        author: string;
        text: string;
        more_bytes: number;
        /** what a `token_usage` note adds to its turn's usage (docs/usage.md); absent for other notes */
        usage?: RowUsage;
      }
    | {
        kind: 'correction';
        id: string;
        by: string;
        target_id: string;
        target_anchor: string;
        field: string;
        value: unknown;
        /** the value it replaced, when its target was read first (the usual order) */
        was: { value: unknown } | null;
        reason: string;
        /** why it changed nothing, when that is known here (verify says it too) */
        refused: string | null;
      }
    | { kind: 'other'; id: string; by: string; type: string; summary: string }
    | {
        kind: 'declared';
        report: StatusView['history'][number];
        /** index of the report in the kept history (oldest 0) */
        index: number;
        /** per claim: the anchor of the recorded action its check matched, by `action_id` */
        action_anchors: Record<string, string>;
      }
    | {
        kind: 'quarantined';
        line: number;
        code: string;
        message: string;
        /** the line's text, escaped, at most 200 characters */
        excerpt: string;
        bytes: number;
      }
  );

/** A writer of the session, as the legend shows it. */
export interface TimelineWriter {
  w: string;
  /**
   * `meta.agent`, else the one person all its joins and messages are by (display name, else user_id),
   * else the writer id; a repeated name gets " 2", " 3" (lib/service/timeline/writers.ts)
   */
  name: string;
  agent: string | null;
  /**
   * who records its events, as the writer index keeps it (lib/log/format/provenance.ts; `unknown` for a writer
   * stored before provenance was kept), and the label of the token that uploaded it (issue 24.1)
   */
  provenance: string;
  token_label: string | null;
  /** chunks of it came from another token than its first's: none of its events count as evidence */
  mixed_tokens: boolean;
  /** 0-based: the palette colour (writers sorted by id) */
  index: number;
  ended: boolean;
  lines: number;
  /** verify findings about this writer that no row shows (a torn last line, a missing writer.start…) */
  problems: TimelineProblem[];
}

/** One page of a session's timeline. */
export interface TimelinePage {
  sid: string;
  /** this page's `after` (−1: the first page); with `?at=` the `after` of the page holding that row */
  after: number;
  /** when the session ran: its first and last event's ts as written (null: none readable) */
  span: { first: string | null; last: string | null };
  /** when it was uploaded: its writers' first and last chunk (store times, ISO UTC); null: no writer */
  uploaded: { first: string; last: string } | null;
  /** the first message's text, one line, escaped, ≤ 120 characters; null when no message was read */
  title: string | null;
  writers: TimelineWriter[];
  /** people read so far (joins and messages up to the end of this page): user_id → display name */
  people: { user_id: string; display_name: string | null }[];
  rows: TimelineRow[];
  /** rows after the last of `rows` exist */
  more: boolean;
  /** the `after` of the next page (the last row's pos), or null */
  next_after: number | null;
  /** verify's counts over the whole session */
  verify: { ok: boolean; errors: number; warnings: number; infos: number };
  /** findings about no writer of the session */
  session_problems: TimelineProblem[];
  status: StatusView | null;
  /** the person filter applied, if any */
  person: string | null;
}
