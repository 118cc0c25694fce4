/**
 * The rescuer (issue 25 item 1; attack items 14 and 15): the program of `dist/hook-watchdog.cjs`, which the
 * hook's supervisor (`hook-watchdog.ts`) becomes once the hook is gone without having ended by itself:
 * killed by the supervisor at its hard deadline (`killed`), or by anyone else before it answered (`gone`:
 * its agent's timeout, a signal, a crash). Its stdin holds the notes the hook wrote as it went; its
 * arguments are the state directory, the harness, the budget and the hard deadline in ms, when the hook
 * started (ms since the epoch), and `killed` or `gone`.
 *
 * It defers the hook's parsed payload to the session's inbox when no event of it was written yet and the
 * hook did not defer it itself (the session's next hook, or the shipper, writes it: nothing is lost), read
 * from its spill file when it was too large for a note, and records a `timeout` in hook-failures.json
 * without payload content. The state directory's own file operations refuse what is not a regular file
 * and make folders in bounded steps, and its lock is waited for 250 ms at most.
 */
import { unlinkSync } from 'node:fs';
import { readRegularFile } from '../api/safe-fs.js';
import { type DeferNote, STAGE_COMMITTED, STAGE_WRITING, type WatchdogNote } from './hook-watchdog.js';
import { appendInbox } from './inbox.js';
import { recordHookFailure } from './state-dir.js';

/** The largest spill read: a payload of at most 64 MiB of stdin (hook-main.ts), written again as JSON. */
const MAX_SPILL_BYTES = 128 * 1024 * 1024;

/** What the notes say the hook did. */
interface Progress {
  hook: string;
  parsed: boolean;
  defer: DeferNote | null;
  stage: number;
  deferred: boolean;
  answered: boolean;
}

/** Reads the notes, one JSON object a line; a line cut short (a note larger than the pipe held) is skipped. */
function progressOf(notes: string, harness: string): Progress {
  const p: Progress = {
    hook: `${harness}:unknown`,
    parsed: false,
    defer: null,
    stage: 0,
    deferred: false,
    answered: false,
  };
  for (const line of notes.split('\n')) {
    let n: WatchdogNote;
    try {
      n = JSON.parse(line) as WatchdogNote;
    } catch {
      continue;
    }
    if (n === null || typeof n !== 'object') continue;
    if ('hook' in n) {
      p.hook = String(n.hook);
      p.defer = n.defer;
      p.parsed = true;
    } else if ('stage' in n) p.stage = Math.max(p.stage, Number(n.stage) || 0);
    else if ('deferred' in n) p.deferred = true;
    else if ('answered' in n) p.answered = true;
  }
  return p;
}

/** The payload a defer note holds or names (its spill file, read whole), or undefined. */
function payloadOf(defer: DeferNote): unknown {
  if ('payload' in defer) return defer.payload;
  // The spill holds one JSON line; a copy cut short (the hook killed while writing it) does not parse.
  return JSON.parse(readRegularFile(defer.spill, MAX_SPILL_BYTES).toString('utf8'));
}

/** Defers and records for the hook. Never throws. */
export function rescue(argv: string[], notes: string): void {
  const [state, harness, budget, hard, born, how] = argv;
  if (!state) return;
  const p = progressOf(notes, harness ?? 'claude-code');
  const ms = Number.isFinite(Number(born)) ? Math.max(0, Date.now() - Number(born)) : Number(hard);
  const spill = p.defer && 'spill' in p.defer ? p.defer.spill : null;
  try {
    record(state, p, { budget: budget ?? '?', hard: hard ?? '?', killed: how === 'killed', ms });
  } finally {
    if (spill !== null) {
      try {
        unlinkSync(spill);
      } catch {
        // gone already
      }
    }
  }
}

function record(
  state: string,
  p: Progress,
  o: { budget: string; hard: string; killed: boolean; ms: number },
): void {
  const ms = Math.round(o.ms);
  if (p.answered) {
    // Only a kill of our own gets here (a hook that answered and ended needs nothing).
    recordHookFailure(state, {
      hook: p.hook,
      reason: 'timeout',
      message: `answered, but the process had not ended by its hard deadline (${o.hard} ms: its exit waited for a thread stuck in a system call): killed by the watchdog`,
      ms,
    });
    return;
  }
  let deferred = p.deferred;
  let unread = false;
  if (!deferred && p.defer && p.stage < STAGE_WRITING) {
    try {
      appendInbox(p.defer.inbox, payloadOf(p.defer));
      deferred = true;
    } catch {
      // a spill cut short, or the state directory refuses: the record below says so
      unread = true;
    }
  }
  const outcome = deferred
    ? "the event was deferred to the session's next hook"
    : p.stage === STAGE_COMMITTED
      ? 'the events were written'
      : p.stage === STAGE_WRITING
        ? 'its events may be partly written'
        : unread
          ? 'the event was not recorded (its copy could not be read or deferred)'
          : p.parsed
            ? 'the event was not recorded'
            : 'no payload was read';
  const what = o.killed
    ? `no answer by its hard deadline (${o.hard} ms; its own timer at ${o.budget} ms could not end it: blocked, in a loop or starved of CPU): killed by the watchdog, the agent got an empty answer`
    : `ended before it answered, ${ms} ms after its start, killed by something other than its watchdog (its agent's timeout, a signal, a crash)`;
  recordHookFailure(state, { hook: p.hook, reason: 'timeout', message: `${what}; ${outcome}`, ms });
}
