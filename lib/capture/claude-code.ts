/**
 * Claude Code hook payloads → v3 events (issue 11), over the importers' shared vocabulary
 * (`lib/harness/mapping.ts`) so that a session captured live reads like one imported from its transcript
 * (`lib/harness/claude-code-records.ts`): a prompt is a `message` plus `turn.start`, `PreToolUse` an
 * `agent.action` and `PostToolUse` its `agent.action_result` (paired by `tool_use_id`, else by tool name and
 * input, first in first out), `Stop` ends the turn, a subagent writes its own segment
 * (`openSubagentWriter`), `PreCompact` and `Notification` are marked notes, `SessionEnd` ends the writer.
 * Unknown events are kept as marked notes, unknown fields as `extra` (small values only).
 *
 * Each hook runs in its own process: everything a later event needs (the writer ids, the open turn, the
 * pending calls) is in `ClaudeState`, saved by the caller under the session's lock.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { openSubagentWriter, WriterMapping } from '../harness/mapping.js';
import type { ActionStatus } from '../log/events.js';
import { newId } from '../log/ids.js';
import { type EmitOptions, openSession, type SessionWriter } from '../log/writer.js';
import type { InboxProgress } from './inbox.js';

/** A hook payload: only `hook_event_name` and `session_id` are needed; everything else is optional. */
export const ClaudeHookPayload = z.looseObject({
  session_id: z.string().min(1),
  hook_event_name: z.string().min(1),
  cwd: z.string().optional(),
  prompt: z.string().optional(),
  tool_name: z.string().optional(),
  tool_input: z.unknown().optional(),
  tool_response: z.unknown().optional(),
  tool_use_id: z.string().optional(),
  last_assistant_message: z.string().optional(),
  message: z.string().optional(),
  error: z.string().optional(),
  agent_id: z.string().optional(),
  trigger: z.string().optional(),
  custom_instructions: z.string().nullish(),
  reason: z.string().optional(),
  source: z.string().optional(),
  notification_type: z.string().optional(),
  is_interrupt: z.boolean().optional(),
});
export type ClaudeHookPayload = z.infer<typeof ClaudeHookPayload>;

/** One writer's mapping state between hook processes. */
export interface StreamState {
  w: string;
  turnId: string | null;
  /** call id → action id of actions without a result yet, in call order */
  pending: [string, string][];
  ended: boolean;
}

/** What `<state>/claude-code/<session_id>.json` holds. */
export interface ClaudeState extends InboxProgress {
  version: 1;
  /** the hansard session id */
  sid: string;
  main: StreamState;
  /** subagent streams by Claude's `agent_id` (or `subagent-<n>` when the payload has none) */
  subagents: Record<string, StreamState & { parentActionId: string | null }>;
  /** main-writer Task/Agent calls not linked to a subagent yet: [call id, action id], launch order */
  tasks: [string, string][];
  /** pairing without `tool_use_id`: hash of tool name and input → synthetic call ids, oldest first */
  fifo: Record<string, string[]>;
  /** counter of synthetic call ids and unnamed subagents */
  counter: number;
  /** a session-bound token minted for the agent's status reports */
  token: { token: string; id: string; expires_at: string } | null;
  cwd: string | null;
  /** the `message` id of the person's last prompt: context of a turn the agent starts on its own */
  lastPromptId?: string | null;
  /** the session's monotonic clock across hook processes: its origin (ms since the epoch), its last value (s) */
  clock: MonoClock;
}

/** Fields that are content (mapped into events, redacted there) or identity: never copied into `extra`. */
const MAPPED_KEYS = new Set([
  'session_id',
  'transcript_path',
  'cwd',
  'hook_event_name',
  'prompt',
  'tool_name',
  'tool_input',
  'tool_response',
  'tool_use_id',
  'last_assistant_message',
  'message',
  'error',
  'custom_instructions',
]);
/** An unknown field's value is kept in `extra` only when its JSON is this small (it is not redacted there). */
const MAX_EXTRA_JSON = 512;

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

/** `mono` across processes: seconds since the session's first hook, never going back (DESIGN §3). */
export interface MonoClock {
  origin: number;
  last: number;
}

/**
 * A clock starting now. Its origin is one second back: the `writer.start` a new writer stamps with its
 * own clock (a few ms after its opening) must not be above the events that follow it.
 */
export function newMonoClock(): MonoClock {
  return { origin: performance.timeOrigin + performance.now() - 1000, last: 0 };
}

/**
 * The `mono` of this invocation's events: every hook runs in a fresh process, where the writer's own
 * monotonic clock would restart at 0 (verify: mono_backwards). Wall time since the session's origin,
 * held at the last value should the wall clock step back.
 */
export function tickMono(c: MonoClock): number {
  const now = Math.round((performance.timeOrigin + performance.now() - c.origin) * 1000) / 1e6;
  c.last = Math.max(c.last, now);
  return c.last;
}

/** Options of `applyClaudeEvent`. */
export interface ApplyOptions {
  /** `<state>/spool` */
  spool: string;
  /** `user_id` of the person's messages */
  userId: string;
  /** the state was loaded (this Claude session was seen before), not made new */
  existing: boolean;
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
  const subStream = (key: string): Stream => {
    let s = st.subagents[key];
    if (s === undefined || s.ended) {
      // Linked to the newest Task/Agent call of the main writer still waiting for a subagent.
      const link = st.tasks.shift();
      s = { w: '', turnId: null, pending: [], ended: false, parentActionId: link?.[1] ?? null };
      st.subagents[key] = s;
      const x = streamOf(s, s.parentActionId, key);
      x.m.openTurn(null, o);
      return x;
    }
    return streamOf(s, s.parentActionId, key);
  };
  /** The stream an event belongs to: a subagent's when the payload names one. */
  const streamFor = (): Stream => (p.agent_id ? subStream(p.agent_id) : mainStream());

  try {
    const before = countOf(streams);
    switch (p.hook_event_name) {
      case 'SessionStart': {
        const x = mainStream();
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
        if (x.s === st.main && SUBAGENT_TOOLS.has(p.tool_name ?? '')) st.tasks.push([callId, actionId]);
        break;
      }
      case 'PostToolUse':
      case 'PostToolUseFailure': {
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
        }
        x.m.result({ callId, ...resultOf(p) }, o);
        // A background subagent (`isAsync`) starts after its launching call has answered: keep the call
        // for it to link to.
        if (!isAsyncLaunch(p.tool_response)) st.tasks = st.tasks.filter(([c]) => c !== callId);
        break;
      }
      case 'Stop': {
        const x = mainStream();
        cancelPending(x, 'the turn ended before this call reported a result', o);
        if (p.last_assistant_message && x.m.turnId !== null) x.m.output(p.last_assistant_message, o);
        x.m.endTurn('completed', o);
        break;
      }
      case 'SubagentStart':
        subStream(p.agent_id ?? `subagent-${++st.counter}`);
        break;
      case 'SubagentStop': {
        const key = p.agent_id ?? Object.keys(st.subagents).findLast((k) => !st.subagents[k]!.ended);
        const x = subStream(key ?? `subagent-${++st.counter}`);
        cancelPending(x, 'the subagent stopped before this call reported a result', o);
        if (p.last_assistant_message) x.m.output(p.last_assistant_message, o);
        x.m.endTurn('completed', o);
        x.m.w.end({ reason: 'subagent stopped' }, o);
        x.s.ended = true;
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

/** Pairing key of a call without `tool_use_id`: its tool and input, hashed. */
function pairKey(p: ClaudeHookPayload): string {
  return createHash('sha256')
    .update(`${p.tool_name ?? ''}\0${JSON.stringify(p.tool_input ?? null)}`)
    .digest('base64url')
    .slice(0, 22);
}

function syntheticCall(st: ClaudeState, p: ClaudeHookPayload): string {
  const id = `hook:${++st.counter}`;
  const key = pairKey(p);
  const list = st.fifo[key] ?? [];
  list.push(id);
  st.fifo[key] = list;
  return id;
}

function takeFifo(st: ClaudeState, p: ClaudeHookPayload): string | undefined {
  const key = pairKey(p);
  const list = st.fifo[key];
  const id = list?.shift();
  if (list && list.length === 0) delete st.fifo[key];
  return id;
}

/**
 * Status, output, error and exit code of a PostToolUse / PostToolUseFailure. Bash answers
 * `{stdout, stderr, interrupted, …}`; a failed call arrives as PostToolUseFailure with `error`
 * ("Exit code N …"); a `tool_response` with `is_error`, `exit_code`/`exitCode` or `interrupted` says so.
 */
export function resultOf(p: ClaudeHookPayload): {
  status: ActionStatus;
  output: unknown;
  error: string | null;
  exitCode: number | null;
} {
  const r = p.tool_response;
  const obj =
    r !== null && typeof r === 'object' && !Array.isArray(r) ? (r as Record<string, unknown>) : null;
  const code = obj ? (num(obj.exit_code) ?? num(obj.exitCode) ?? num(obj.returnCode)) : null;
  if (p.hook_event_name === 'PostToolUseFailure' || p.error !== undefined) {
    const error = p.error ?? 'the tool call failed';
    const m = /exit code:? (\d+)/i.exec(error);
    return {
      status: p.is_interrupt ? 'cancelled' : 'error',
      output: r ?? null,
      error,
      exitCode: code ?? (m ? Number(m[1]) : null),
    };
  }
  if (obj?.interrupted === true)
    return { status: 'cancelled', output: r, error: 'interrupted', exitCode: code };
  if (obj?.is_error === true || (code !== null && code !== 0)) {
    const stderr = typeof obj?.stderr === 'string' && obj.stderr ? obj.stderr : null;
    return { status: 'error', output: r, error: stderr ?? `exit code ${code ?? 'unknown'}`, exitCode: code };
  }
  // Bash with no exit code in its response finished normally: Claude Code reports failures separately.
  const bashOk = p.tool_name === 'Bash' && obj !== null && 'stdout' in obj;
  return { status: 'ok', output: r ?? null, error: null, exitCode: code ?? (bashOk ? 0 : null) };
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) ? v : null;
}

/** The payload's fields that are not mapped, small ones only (they are not redacted in `extra`). */
function extraOf(p: ClaudeHookPayload): Record<string, unknown> {
  const extra: Record<string, unknown> = { hook_event: p.hook_event_name };
  for (const [k, v] of Object.entries(p)) {
    if (MAPPED_KEYS.has(k) || v === undefined) continue;
    const json = JSON.stringify(v);
    if (json !== undefined && json.length <= MAX_EXTRA_JSON) extra[k] = v;
  }
  return extra;
}
