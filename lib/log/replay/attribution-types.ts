/**
 * The shape of an attribution (lib/log/replay/attribution.ts, which re-exports these; DESIGN §3 "Attribution",
 * docs/attribution.md): split from attribution.ts for its size.
 */
import type { RecordedEvent } from '../format/codec.js';
import type { LogEvent } from '../format/events.js';
import type { MergedEvent } from '../read/merge.js';
import type { IdTable } from './id-table.js';

/** How an attribution was reached (DESIGN §3), from recorded facts to inference. */
export type AttributionBasis =
  | 'recorded'
  | 'recorded_no_cause'
  | 'recorded_context'
  | 'recorded_empty_context'
  | 'cascade'
  | 'temporal'
  | 'contested'
  | 'none';

/** One rival participant of a contested attribution. */
export interface AttributionCandidate {
  user_id: string;
  /** this participant's messages in the window, in merged order */
  message_ids: string[];
  confidence: number;
}

/** The attribution of one `agent.action` or `agent.output`. */
export interface Attribution {
  event_id: string;
  type: 'agent.action' | 'agent.output';
  /** the event's `turn_id`, or null when it has none */
  turn_id: string | null;
  /** the human message ids it is attributed to (empty for `recorded_no_cause`, `recorded_empty_context`, `none`) */
  message_ids: string[];
  basis: AttributionBasis;
  /** in [0, 1], rounded to 6 decimal places */
  confidence: number;
  /** contested (and a cascade from a contested action): each participant with a share of the confidence */
  candidates?: AttributionCandidate[];
  /** cascade: the earlier action whose attribution was inherited */
  cascade_from?: string;
}

/** Anything `attribute` accepts as one event of the merged stream. */
export type AttributableInput = LogEvent | RecordedEvent | MergedEvent;

/** Options of an `Attributor`. */
export interface AttributorOptions {
  /**
   * Results inferred from the same window (the actions and outputs of one turn, and cascades from them)
   * share their `message_ids` and `candidates` arrays instead of each getting copies: for a caller that
   * never changes a result (the text replay, which also recognises a window it has shown by its array).
   * Default false: every result's arrays are its own.
   */
  shareWindows?: boolean;
  /**
   * Message ids (in all) of the recent turns' windows kept for the turns' next events (default 256 Ki);
   * a window no longer kept is made again, the same. Tests pass 0 to keep none.
   */
  keptWindowIds?: number;
  /**
   * Where the message ids are interned (default a table of its own): the text replay passes the table
   * it keeps its messages' authors by, so that each id is stored once.
   */
  messageIds?: IdTable;
}
