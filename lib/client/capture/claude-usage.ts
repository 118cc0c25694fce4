/**
 * The token usage the Claude Code hook records (issue 27 item 1, docs/capture.md "Token usage"): each
 * assistant message's `usage`, read from Claude Code's transcript (`transcript-usage.ts`) and written as
 * a `token_usage` note in the contract of lib/log/format/usage-note.ts (`usage_source: 'claude_message'`),
 * in the writer of the agent that made the request: the main writer, or a subagent's own.
 *
 * When (claude-code.ts calls these before the event's own events, so that a turn's usage lands in it,
 * before its `turn.end`):
 * - PostToolUse / PostToolUseFailure: the main transcript (the message that asked for the tool is there
 *   by then), and a subagent's own transcript when the payload names it (`agent_transcript_path`);
 * - Stop: the main transcript, waiting a little (`STOP_WAIT_MS`) until the message Stop names
 *   (`last_assistant_message`) has been read: Claude Code runs the Stop hook before it has always
 *   written that message (anthropics/claude-code#15813, #40655); subagents' files not read to their end;
 * - SubagentStop: the subagent's own transcript, waiting the same way, into its writer before it ends;
 * - UserPromptSubmit (before the prompt is written) and SessionEnd (before the turns end): whatever came
 *   after the last read. A note written after its turn ended, before the next begins, belongs to the
 *   writer's last turn (lib/log/analyse/usage/fold.ts).
 */

import { createHash } from 'node:crypto';
import type { WriterMapping } from '../../importers/mapping.js';
import { USAGE_NOTE_KIND } from '../../log/format/usage-note.js';
import type { EmitOptions } from '../../log/write/writer.js';
import {
  MAX_FILES,
  outputOf,
  readTranscriptUsage,
  type TranscriptCursor,
  type UsageRecord,
  type UsageState,
} from './transcript-usage.js';

export { USAGE_READ_MAX_BYTES, type UsageState } from './transcript-usage.js';

/** How long Stop and SubagentStop wait at most for the message they name to reach the transcript. */
export const STOP_WAIT_MS = 300;
const STOP_POLL_MS = 20;
/** The author of the usage notes: the agent whose figures they are. */
const AUTHOR = 'claude-code';

/** What one hook invocation may spend on transcripts. */
export interface UsageOptions {
  env: NodeJS.ProcessEnv;
  /** `performance.now()` ms past which no read starts and no wait goes on (inside the hook's budget) */
  deadline: number;
  /** bytes this invocation may still read, shared by all its reads (`USAGE_READ_MAX_BYTES` at first) */
  budget: { bytes: number };
  /** a transcript was refused (a short reason, no path, no content): recorded for `hansard doctor` */
  refused: (reason: string) => void;
}

/** The writers usage notes go to. */
export interface UsageSink {
  main(): WriterMapping;
  /** the open writer of the subagent `agent_id`, null when it has none open */
  subagent(agentId: string): WriterMapping | null;
}

/** One transcript to read. */
export interface UsageRead {
  path: string;
  /** a subagent's own transcript: every record is this subagent's */
  agent?: string;
  /** wait (bounded) until a text block this message ends with has been read (Stop's last message) */
  waitFor?: string | null;
}

/**
 * Reads `r.path` past its saved position and writes a note per message read (module comment), within
 * `opts`. Updates `usage` (positions, the refusal recorded). Throws only the writer's errors. Returns how
 * many notes were written.
 */
export function recordTranscriptUsage(
  usage: UsageState,
  r: UsageRead,
  sink: UsageSink,
  o: EmitOptions,
  opts: UsageOptions,
): number {
  let written = 0;
  const cursor = usage.files[r.path];
  // A revisit of a subagent's file waits for nothing, but knows the message its SubagentStop named.
  const want = squash(r.waitFor ?? '');
  const wantHash = want !== '' ? hashOf(want) : cursor?.waitFor;
  let seen = want === '';
  const waitUntil = Math.min(performance.now() + STOP_WAIT_MS, opts.deadline);
  // The main transcript first seen by a state that did not begin with the session: from its end.
  const startAtEnd = r.agent === undefined && !usage.fromStart;
  for (;;) {
    if (performance.now() > opts.deadline || opts.budget.bytes <= 0) break;
    const res = readTranscriptUsage(r.path, usage.files[r.path], {
      env: opts.env,
      maxBytes: opts.budget.bytes,
      startAtEnd,
    });
    if (res.kind === 'absent') {
      // Not there yet: whatever it holds once it is came after capture began, so it is read from 0
      // (a position of no file: the first file seen there is a new one).
      if (usage.files[r.path] === undefined)
        keep(usage, r.path, { offset: 0, dev: 0, ino: 0, ...agentOf(r) });
      break;
    }
    if (res.kind === 'refused') {
      const key = `${r.path}\0${res.reason}`;
      if (usage.refused !== key) opts.refused(res.reason);
      usage.refused = key;
      break;
    }
    opts.budget.bytes -= res.bytes;
    if (r.agent !== undefined) res.cursor.agent = r.agent;
    keep(usage, r.path, res.cursor);
    written += writeNotes(res.records, res.cursor, sink, o);
    if (usage.refused?.startsWith(`${r.path}\0`)) delete usage.refused;
    // A subagent's file holds only its records; the main one, the main chain's and older subagents'.
    const own = res.texts.filter((t) => r.agent !== undefined || !t.sidechain).map((t) => squash(t.text));
    if (!seen && own.some((t) => t !== '' && (want.endsWith(t) || t.endsWith(want)))) seen = true;
    if (r.agent !== undefined && wantHash !== undefined) {
      // A subagent's file is done once its last message (its SubagentStop's) has been read.
      if ((want !== '' && seen) || own.some((t) => hashOf(t) === wantHash)) res.cursor.done = true;
      else res.cursor.waitFor = wantHash;
    }
    if (res.more) continue;
    if (seen || performance.now() + STOP_POLL_MS > waitUntil) break;
    Atomics.wait(SLEEPER, 0, 0, STOP_POLL_MS);
  }
  return written;
}

/**
 * Reads again the subagents' own transcripts not yet read to their final message (their SubagentStop
 * came before the message reached the file): into the subagent's writer while it is open, else the main
 * writer marked `sidechain`.
 */
export function revisitSubagentFiles(
  usage: UsageState,
  sink: UsageSink,
  o: EmitOptions,
  opts: UsageOptions,
): number {
  let n = 0;
  for (const [path, c] of Object.entries(usage.files)) {
    if (c.agent !== undefined && !c.done)
      n += recordTranscriptUsage(usage, { path, agent: c.agent }, sink, o, opts);
  }
  return n;
}

function agentOf(r: UsageRead): { agent?: string } {
  return r.agent !== undefined ? { agent: r.agent } : {};
}

/** Forgets the subagents' files (the session ended: nothing of theirs is written after). */
export function forgetSubagentFiles(usage: UsageState): void {
  for (const [path, c] of Object.entries(usage.files)) if (c.agent !== undefined) delete usage.files[path];
}

/** Saves `c` as the newest position; past `MAX_FILES`, done subagents' files go first, then the oldest. */
function keep(usage: UsageState, path: string, c: TranscriptCursor): void {
  delete usage.files[path];
  usage.files[path] = c;
  const paths = Object.keys(usage.files);
  for (let extra = paths.length - MAX_FILES; extra > 0; extra--) {
    const victim = paths.find((p) => usage.files[p]?.done) ?? paths.find((p) => p !== path)!;
    delete usage.files[victim];
    paths.splice(paths.indexOf(victim), 1);
  }
}

/** One `token_usage` note per record, in the writer of the agent that made the request. */
function writeNotes(records: UsageRecord[], c: TranscriptCursor, sink: UsageSink, o: EmitOptions): number {
  for (const rec of records) {
    const agent = c.agent ?? (rec.sidechain ? rec.agentId : null);
    const sub = agent !== null ? sink.subagent(agent) : null;
    // A subagent's record with no open writer of its own: the main writer, marked as the subagent's.
    const side =
      sub === null && (c.agent !== undefined || rec.sidechain)
        ? { sidechain: true, ...(agent !== null ? { agent_id: agent } : {}) }
        : {};
    (sub ?? sink.main()).marked(USAGE_NOTE_KIND, AUTHOR, noteText(rec), o, {
      ...(o.extra?.hook_event !== undefined ? { hook_event: o.extra.hook_event } : {}),
      usage_source: 'claude_message',
      message_id: rec.messageId,
      model: rec.model,
      usage: rec.usage,
      ...(rec.requestId !== null ? { request_id: rec.requestId } : {}),
      ...(rec.costUsd !== null ? { cost_usd: rec.costUsd } : {}),
      ...side,
    });
  }
  return records.length;
}

/** "token usage of msg_… (model): input 25, output 120, cache read 0, cache write 0" (Anthropic's fields). */
function noteText(rec: UsageRecord): string {
  const n = (v: unknown) => (typeof v === 'number' ? String(v) : '?');
  const u = rec.usage;
  return `token usage of ${rec.messageId} (${rec.model ?? 'unknown model'}): input ${n(u.input_tokens)}, output ${n(
    outputOf(rec),
  )}, cache read ${n(u.cache_read_input_tokens)}, cache write ${n(u.cache_creation_input_tokens)}`;
}

/** A short digest of a message's text: what a subagent's file waits for, kept in the state without the text. */
function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

/** Text compared with whitespace runs as one space: the payload's copy and the record's may differ there. */
function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

const SLEEPER = new Int32Array(new SharedArrayBuffer(4));
