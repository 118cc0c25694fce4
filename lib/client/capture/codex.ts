/**
 * Codex `notify` payloads → v3 events (issue 11). Codex runs its `notify` program after each turn with
 * one JSON argument: `{"type":"agent-turn-complete","thread-id","turn-id","cwd","client",
 * "input-messages":[…],"last-assistant-message"}` (test/fixtures/real-client/codex-0.169.0-notify.json).
 * Each thread is one hansard session with one writer: the input messages become `message`s, a
 * `turn.start` naming them, the last assistant message an `agent.output`, then `turn.end`. Other types
 * are kept as marked notes. A delivery already recorded (notify run twice for one turn, a notify
 * program registered twice) writes only a note marked `duplicate` (issue 25 item 2): the same type for a
 * turn id seen before, or, without a turn id, a payload identical to the previous one.
 */
import { z } from 'zod';
import { WriterMapping } from '../../importers/mapping.js';
import { newId } from '../../log/format/ids.js';
import { type EmitOptions, openSession } from '../../log/write/writer.js';
import { HOOK_NOTE_AUTHOR, type MonoClock, newMonoClock, tickMono } from './claude-code.js';
import { duplicateText, fingerprint } from './deliveries.js';
import { type GitEmailState, joinWithEmail } from './git-email.js';
import type { InboxProgress } from './inbox.js';

/** A notify payload: tolerant, unknown keys kept. */
export const CodexNotifyPayload = z.looseObject({
  type: z.string().min(1),
  'thread-id': z.string().min(1).optional(),
  'turn-id': z.string().optional(),
  cwd: z.string().optional(),
  client: z.string().optional(),
  'input-messages': z.array(z.unknown()).optional(),
  'last-assistant-message': z.string().nullish(),
});
export type CodexNotifyPayload = z.infer<typeof CodexNotifyPayload>;

/** What `<state>/codex/<thread id>.json` holds. */
export interface CodexState extends InboxProgress, GitEmailState {
  version: 1;
  sid: string;
  w: string;
  /**
   * turn ids already written, newest last (at most `MAX_SEEN`); `<type>:<turn id>` for types other than
   * agent-turn-complete
   */
  turns: string[];
  /** fingerprint of the last payload recorded (`deliveries.ts`) */
  last?: string;
  cwd: string | null;
  clock: MonoClock;
}

const MAX_SEEN = 200;
const AGENT = 'codex';
const APP = 'hansard hook codex';

/** A new mapping state for a Codex thread. */
export function newCodexState(cwd: string | null): CodexState {
  return { version: 1, sid: newId('s'), w: newId('w'), turns: [], cwd, clock: newMonoClock() };
}

/**
 * Writes the events of one notify payload into the spool and updates `st` in place. Returns the number
 * of events written (1, the duplicate's note, for a delivery already recorded). Throws only the writer's
 * errors. `gitEmail`: the person's git `user.email` read at the thread's start with their consent
 * (git-email.ts; null: none set; absent: not read): the first payload recorded writes their
 * `participant.join` with it, before its messages.
 */
export function applyCodexEvent(
  p: CodexNotifyPayload,
  st: CodexState,
  opts: { spool: string; userId: string; gitEmail?: string | null },
): number {
  const turnId = p['turn-id'];
  // agent-turn-complete keeps the bare turn id (states written before other types were keyed).
  const key = turnId ? (p.type === 'agent-turn-complete' ? turnId : `${p.type}:${turnId}`) : null;
  const fp = fingerprint(p);
  const duplicate = key ? st.turns.includes(key) : st.last === fp;
  const w = openSession(opts.spool, {
    sid: st.sid,
    writerId: st.w,
    agent: AGENT,
    app: APP,
    provenance: 'hook',
    extra: { codex_thread_id: p['thread-id'] ?? null },
  });
  const extra: Record<string, unknown> = { hook_event: p.type };
  if (turnId) extra.codex_turn_id = turnId;
  if (p.client) extra.client = p.client;
  st.clock ??= newMonoClock();
  const o: EmitOptions = { extra, mono: tickMono(st.clock) };
  const m = new WriterMapping(w, opts.userId);
  let joined = 0;
  try {
    if (!duplicate && joinWithEmail(w, st, opts.userId, opts.gitEmail, o)) joined = 1;
    if (duplicate) {
      m.marked('duplicate', HOOK_NOTE_AUTHOR, duplicateText(p.type, key ? `turn-id ${turnId}` : null), o);
    } else if (p.type === 'agent-turn-complete') {
      const ids = (p['input-messages'] ?? []).map((t) =>
        m.queuedMessage(typeof t === 'string' ? t : JSON.stringify(t), o),
      );
      m.openTurn(ids, o);
      const last = p['last-assistant-message'];
      if (last) m.output(last, o);
      m.endTurn('completed', o);
    } else {
      m.marked('unknown_record', HOOK_NOTE_AUTHOR, JSON.stringify(p), o);
    }
  } finally {
    w.close();
  }
  if (key && !duplicate) st.turns = [...st.turns, key].slice(-MAX_SEEN);
  st.last = fp;
  const c = m.counts;
  // turn.end is not counted by the mapping; it was written when a turn was.
  return joined + c.prompts + c.turns * 2 + c.outputs + c.notes;
}
