/**
 * Claude Code hook payloads → v3 events (issue 11), over the importers' shared vocabulary
 * (`lib/importers/mapping.ts`) so that a session captured live reads like one imported from its transcript
 * (`lib/importers/claude-code-records.ts`): a prompt is a `message` plus `turn.start`, `PreToolUse` an
 * `agent.action` and `PostToolUse` its `agent.action_result` (paired by `tool_use_id`, else by tool name and
 * input, first in first out), `Stop` ends the turn, a subagent writes its own segment
 * (`openSubagentWriter`), `PreCompact` and `Notification` are marked notes, `SessionEnd` ends the writer.
 * Unknown events are kept as marked notes, unknown fields as `extra` (small values only). A delivery
 * already recorded (a hook registered twice) writes at most a marked note (`deliveries.ts`); a subagent
 * is linked to its call only by what ties them (`subagents.ts`).
 *
 * Each hook runs in its own process: everything a later event needs (the writer ids, the open turn, the
 * pending calls) is in `ClaudeState`, saved by the caller under the session's lock.
 */
import { openSubagentWriter, WriterMapping } from '../../importers/mapping.js';
import { newId } from '../../log/format/ids.js';
import { type EmitOptions, openSession, type SessionWriter } from '../../log/write/writer.js';
import { extraOf, type FifoTable, resultOf, syntheticCall, takeFifo } from './claude-results.js';
import type { ClaudeHookPayload, StreamState, SubagentStream } from './claude-types.js';
import {
  forgetSubagentFiles,
  recordTranscriptUsage,
  revisitSubagentFiles,
  type UsageOptions,
  type UsageSink,
  type UsageState,
} from './claude-usage.js';
import {
  claudeDeliveryKey,
  claudeDuplicate,
  duplicateText,
  fingerprint,
  preToolKey,
  remember,
  subagentStopKey,
} from './deliveries.js';
import { type GitEmailState, joinWithEmail } from './git-email.js';
import type { InboxProgress } from './inbox.js';
import { type MonoClock, newMonoClock, tickMono } from './mono-clock.js';
import {
  addTask,
  agentIdOfResponse,
  claimTask,
  dropTask,
  identityOf,
  onlyOpenOfType,
  setTaskAgent,
  type TaskTable,
  tiedById,
} from './subagents.js';

export { ClaudeHookPayload, type StreamState, type SubagentStream } from './claude-types.js';
export { type MonoClock, newMonoClock, resultOf, tickMono };

/** What `<state>/claude-code/<session_id>.json` holds. */
export interface ClaudeState extends InboxProgress, TaskTable, FifoTable, GitEmailState {
  version: 1;
  /** the hansard session id */
  sid: string;
  main: StreamState;
  /** subagent streams by Claude's `agent_id` (or `subagent-<n>` when the payload has none) */
  subagents: Record<string, SubagentStream>;
  /** keys of the deliveries recorded that carry an id (`deliveries.ts`), newest last, bounded */
  seen?: string[];
  /** a session-bound token minted for the agent's status reports */
  token: { token: string; id: string; expires_at: string } | null;
  cwd: string | null;
  /** the `message` id of the person's last prompt: context of a turn the agent starts on its own */
  lastPromptId?: string | null;
  /** the session's monotonic clock across hook processes: its origin (ms since the epoch), its last value (s) */
  clock: MonoClock;
  /** how far Claude Code's transcripts were read for token usage (`claude-usage.ts`); absent before issue 27 */
  usage?: UsageState;
}

/**
 * Prompts Claude Code submits itself (a background subagent's `<task-notification>`, seen from 2.1.328 in
 * test/real-client/claude-payloads.test.ts): not a person's message.
 */
const NOT_A_PERSON = /^\s*<task-notification>/;

/** A launching call answered at once while its subagent runs on (`{isAsync: true}`). */
function isAsyncLaunch(response: unknown): boolean {
  const r = response as { isAsync?: unknown; status?: unknown } | null;
  return r !== null && typeof r === 'object' && (r.isAsync === true || r.status === 'async_launched');
}

/** Tools that launch a subagent (as in the transcript importer). */
const SUBAGENT_TOOLS = new Set(['Task', 'Agent']);
const AGENT = 'claude-code';
const APP = 'hansard hook claude-code';
/** Author of the notes the hook writes for what it does not map. */
export const HOOK_NOTE_AUTHOR = 'hansard-hook';

/** A new mapping state for a Claude session (no writer opened yet). */
export function newClaudeState(cwd: string | null): ClaudeState {
  return {
    version: 1,
    sid: newId('s'),
    main: { w: newId('w'), turnId: null, pending: [], ended: false },
    subagents: {},
    tasks: [],
    fifo: {},
    counter: 0,
    token: null,
    cwd,
    clock: newMonoClock(),
  };
}

/** Options of `applyClaudeEvent`. */
export interface ApplyOptions {
  /** `<state>/spool` */
  spool: string;
  /** `user_id` of the person's messages */
  userId: string;
  /** the state was loaded (this Claude session was seen before), not made new */
  existing: boolean;
  /** read token usage from the transcripts the payload names, within these limits; absent: never */
  usage?: UsageOptions;
  /**
   * the person's git `user.email` read at this session's start with their consent (git-email.ts): a
   * `SessionStart` writes their `participant.join` with it once per session; null: read, none set;
   * absent: not read (no consent, or read already)
   */
  gitEmail?: string | null;
}

interface Stream {
  s: StreamState;
  m: WriterMapping;
}

/**
 * Writes the events of one hook payload into the spool and updates `st` in place. Synchronous; throws
 * only the writer's errors (file system). Returns how many events were written.
 */
export function applyClaudeEvent(p: ClaudeHookPayload, st: ClaudeState, opts: ApplyOptions): number {
  const open: SessionWriter[] = [];
  let written = 0;
  st.clock ??= newMonoClock();
  const o: EmitOptions = { extra: extraOf(p), mono: tickMono(st.clock) };
  const writerFor = (s: StreamState, parentActionId?: string | null, subagentId?: string): SessionWriter => {
    let w: SessionWriter;
    if (subagentId !== undefined && s.w === '') {
      w = openSubagentWriter(mainStream().m.w, {
        agent: AGENT,
        app: APP,
        subagentId,
        parentActionId: parentActionId ?? null,
      });
      s.w = w.w;
    } else {
      w = openSession(opts.spool, {
        sid: st.sid,
        writerId: s.w,
        agent: AGENT,
        app: APP,
        provenance: 'hook',
        extra: subagentId === undefined ? { claude_session_id: p.session_id } : { subagent_id: subagentId },
      });
    }
    open.push(w);
    return w;
  };
  const streams = new Map<StreamState, Stream>();
  const streamOf = (s: StreamState, parentActionId?: string | null, subagentId?: string): Stream => {
    let x = streams.get(s);
    if (x) return x;
    const w = writerFor(s, parentActionId, subagentId);
    const m = new WriterMapping(w, opts.userId);
    m.turnId = s.turnId;
    for (const [c, a] of s.pending) m.adopt(c, a);
    x = { s, m };
    streams.set(s, x);
    return x;
  };
  function mainStream(): Stream {
    // A Claude session resumed after SessionEnd goes on in a new writer of the same hansard session.
    if (st.main.ended) st.main = { w: newId('w'), turnId: null, pending: [], ended: false };
    return streamOf(st.main);
  }
  /** A new stream for subagent `key`, linked to the call that ties it (`subagents.ts`), or to none. */
  const openSub = (key: string, byIdOnly = false): Stream => {
    const who = identityOf(p);
    const s: SubagentStream = {
      w: '',
      turnId: null,
      pending: [],
      ended: false,
      parentActionId: claimTask(st, who, byIdOnly),
      type: who.agentType,
    };
    st.subagents[key] = s;
    const x = streamOf(s, s.parentActionId, key);
    x.m.openTurn(null, o);
    return x;
  };
  const subStream = (key: string): Stream => {
    const s = st.subagents[key];
    return s === undefined || s.ended ? openSub(key) : streamOf(s, s.parentActionId, key);
  };
  /** The stream an event belongs to: a subagent's when the payload names one. */
  const streamFor = (): Stream => (p.agent_id ? subStream(p.agent_id) : mainStream());

  // Token usage from the transcripts (issue 27, `claude-usage.ts`), written before the event's own events.
  const u = opts.usage;
  st.usage ??= {
    files: {},
    // Read from its start only when this state began with the session: else what came before belongs
    // to turns this capture never recorded.
    fromStart:
      !opts.existing && p.hook_event_name === 'SessionStart' && (p.source ?? 'startup') === 'startup',
  };
  const usageState = st.usage;
  const sink: UsageSink = {
    main: () => mainStream().m,
    subagent: (id) => {
      const s = st.subagents[id];
      return s && !s.ended && s.w ? streamOf(s, s.parentActionId, id).m : null;
    },
  };
  const usageOf = (path: unknown, agent?: string, waitFor?: string): void => {
    if (u && typeof path === 'string' && path !== '')
      recordTranscriptUsage(usageState, { path, agent, waitFor }, sink, o, u);
  };
  const revisit = (): void => {
    if (u) revisitSubagentFiles(usageState, sink, o, u);
  };

  const fp = fingerprint(p);
  const key = claudeDeliveryKey(p);
  try {
    const before = countOf(streams);
    const dup = claudeDuplicate(p, st, key, fp);
    if (dup) {
      // Kept as a marked note where the stream is still open; nothing reopens a writer for it.
      const sub = p.agent_id ? st.subagents[p.agent_id] : undefined;
      const x =
        sub && !sub.ended && sub.w
          ? streamOf(sub, sub.parentActionId, p.agent_id)
          : st.main.ended
            ? null
            : mainStream();
      x?.m.marked('duplicate', HOOK_NOTE_AUTHOR, duplicateText(p.hook_event_name, dup.ident), o, o.extra);
      return countOf(streams) - before;
    }
    switch (p.hook_event_name) {
      case 'SessionStart': {
        const x = mainStream();
        joinWithEmail(x.m.w, st, opts.userId, opts.gitEmail, o);
        if (opts.existing || (p.source && p.source !== 'startup'))
          x.m.marked(
            'meta',
            AGENT,
            `Claude Code session start (source: ${p.source ?? 'unknown'})`,
            o,
            o.extra,
          );
        break;
      }
      case 'UserPromptSubmit': {
        // What came after the last read belongs to the turn before: written before this prompt's turn.
        usageOf(p.transcript_path);
        revisit();
        const x = mainStream();
        const text = p.prompt ?? '';
        if (NOT_A_PERSON.test(text)) {
          // Claude Code hands a background subagent's result back as a prompt of its own: not the
          // person's. Kept as a marked note; the work it starts goes on from the person's last prompt.
          x.m.marked('meta', AGENT, text, o, { ...o.extra, injected: true });
          if (x.m.turnId === null) x.m.openTurn(st.lastPromptId ? [st.lastPromptId] : null, o);
          break;
        }
        cancelPending(x, 'a new prompt arrived before this call finished', o);
        st.lastPromptId = x.m.prompt(text, o);
        break;
      }
      case 'PreToolUse': {
        const x = streamFor();
        const callId = p.tool_use_id ?? syntheticCall(st, p);
        const actionId = x.m.action(
          { tool: p.tool_name ?? 'unknown', input: p.tool_input ?? null, callId },
          o,
        );
        if (x.s === st.main && SUBAGENT_TOOLS.has(p.tool_name ?? ''))
          addTask(st, callId, actionId, p.tool_input);
        break;
      }
      case 'PostToolUse':
      case 'PostToolUseFailure': {
        usageOf(p.transcript_path);
        if (p.agent_id) usageOf(p.agent_transcript_path, p.agent_id);
        const x = streamFor();
        let callId = p.tool_use_id ?? takeFifo(st, p);
        if (callId === undefined || x.m.actionFor(callId) === undefined) {
          // A result whose call this session never saw (the hook was installed mid-call, or a PreToolUse
          // hook failed): write the call from what the result repeats, so nothing dangles.
          callId ??= `hook:${++st.counter}`;
          x.m.action(
            { tool: p.tool_name ?? 'unknown', input: p.tool_input ?? null, callId },
            { ...o, extra: { ...o.extra, reconstructed: true } },
          );
          // That call's own PreToolUse, should it still come (deferred), is recorded already.
          if (p.tool_use_id) st.seen = remember(st.seen, preToolKey(p.tool_use_id));
        }
        x.m.result({ callId, ...resultOf(p) }, o);
        // A background subagent (`isAsync`) starts after its launching call has answered: keep the call
        // for it to link to, by the id the answer names when it names one.
        if (!isAsyncLaunch(p.tool_response)) dropTask(st, callId);
        else {
          const agentId = agentIdOfResponse(p.tool_response);
          if (agentId) setTaskAgent(st, callId, agentId);
        }
        break;
      }
      case 'Stop': {
        usageOf(p.transcript_path, undefined, p.last_assistant_message);
        revisit();
        const x = mainStream();
        cancelPending(x, 'the turn ended before this call reported a result', o);
        if (p.last_assistant_message && x.m.turnId !== null) x.m.output(p.last_assistant_message, o);
        x.m.endTurn('completed', o);
        break;
      }
      case 'SubagentStart': {
        const id = p.agent_id ?? `subagent-${++st.counter}`;
        // A subagent whose tool events came first (its start deferred) already has its stream.
        if (st.subagents[id] === undefined || st.subagents[id].ended) openSub(id);
        st.subagents[id]!.started = true;
        break;
      }
      case 'SubagentStop': {
        const id = p.agent_id ?? onlyOpenOfType(st.subagents, p.agent_type);
        const s = id === undefined ? undefined : st.subagents[id];
        let x = s && !s.ended ? streamOf(s, s.parentActionId, id) : undefined;
        // A subagent never seen starting: its own writer only when a call's result named its id.
        if (x === undefined && p.agent_id && tiedById(st, p.agent_id)) x = openSub(p.agent_id, true);
        if (x === undefined) {
          // Nothing ties it to a call or a running subagent (another agent's stop, an empty type):
          // a marked note, linked to nothing, that takes no call's link.
          mainStream().m.marked(
            'meta',
            AGENT,
            p.last_assistant_message || 'a subagent this session never saw start stopped',
            o,
            { ...o.extra, unlinked_subagent: true },
          );
          if (p.agent_id) st.seen = remember(st.seen, subagentStopKey(p.agent_id));
          break;
        }
        const agentKey = id ?? p.agent_id;
        if (agentKey) usageOf(p.agent_transcript_path, agentKey, p.last_assistant_message);
        cancelPending(x, 'the subagent stopped before this call reported a result', o);
        if (p.last_assistant_message) x.m.output(p.last_assistant_message, o);
        x.m.endTurn('completed', o);
        x.m.w.end({ reason: 'subagent stopped' }, o);
        x.s.ended = true;
        (x.s as SubagentStream).stopped = true;
        break;
      }
      case 'PreCompact': {
        const trigger = p.trigger ?? 'unknown';
        const text = `context compaction (${trigger})${p.custom_instructions ? `: ${p.custom_instructions}` : ''}`;
        mainStream().m.compaction(AGENT, text, o, { ...o.extra, trigger });
        break;
      }
      case 'Notification':
        streamFor().m.marked('meta', AGENT, p.message ?? '', o, {
          ...o.extra,
          ...(p.notification_type ? { notification_type: p.notification_type } : {}),
        });
        break;
      case 'SessionEnd': {
        usageOf(p.transcript_path);
        revisit();
        forgetSubagentFiles(usageState);
        for (const s of Object.values(st.subagents)) {
          if (s.ended || !s.w) continue;
          const x = streamOf(s, s.parentActionId, 'ended-with-session');
          cancelPending(x, 'the session ended before this call reported a result', o);
          x.m.endTurn('completed', o);
          x.m.w.end({ reason: 'session ended' }, o);
          s.ended = true;
        }
        const x = mainStream();
        cancelPending(x, 'the session ended before this call reported a result', o);
        x.m.endTurn('completed', o);
        x.m.w.end({ reason: p.reason ?? null }, o);
        st.main.ended = true;
        break;
      }
      default:
        // An event this version does not know: kept whole, as what it is.
        // `marked`'s extra replaces the options' own: pass them on.
        streamFor().m.marked('unknown_record', HOOK_NOTE_AUTHOR, JSON.stringify(p), o, o.extra);
    }
    if (key) st.seen = remember(st.seen, key);
    const target = p.agent_id ? st.subagents[p.agent_id] : st.main;
    if (target) target.last = fp;
    written = countOf(streams) - before;
  } finally {
    for (const x of streams.values()) {
      x.s.turnId = x.m.turnId;
      x.s.pending = x.m.pendingCalls();
    }
    for (const w of open) w.close();
  }
  return written;
}

/** Events written through the streams so far (counts plus turn ends are not needed: an estimate for logs). */
function countOf(streams: Map<StreamState, Stream>): number {
  let n = 0;
  for (const x of streams.values()) {
    const c = x.m.counts;
    n += c.prompts + c.turns + c.actions + c.results + c.outputs + c.notes;
  }
  return n;
}

/** Each call still waiting gets a `cancelled` result (`reason`): a new prompt or the turn's end came first. */
function cancelPending(x: Stream, reason: string, o: EmitOptions): void {
  for (const [callId] of x.m.pendingCalls()) x.m.result({ callId, status: 'cancelled', error: reason }, o);
}
