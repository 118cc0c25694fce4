/**
 * Replay: a merged session as NDJSON or as readable text (seed 001 "replay", DESIGN §3).
 *
 * NDJSON gives each event's line exactly as its writer wrote it, in merged order, one per line. Text gives
 * one line per event: time, who, what. Both skip quarantined lines (they are in the raw segments, and
 * verify reports them). The same function serves the CLI on a local directory and the server, so the two
 * give the same bytes for the same segments.
 */
import type { RecordedEvent } from './codec.js';
import { type MergeOptions, type MergeSource, mergeSegments, mergeSegmentsKeepingProblems } from './merge.js';

export type ReplayFormat = 'ndjson' | 'text';

/**
 * The merged replay of `sources` as lines of text, each ending with `\n`.
 * @param format `ndjson` (default) or `text`
 */
export async function* replayLines(
  sources: MergeSource[],
  format: ReplayFormat = 'ndjson',
  options: MergeOptions = {},
): AsyncGenerator<string> {
  const agents = new Map<string, string>();
  for await (const { event } of mergeSegments(sources, options)) {
    if (format === 'ndjson') yield `${event.raw}\n`;
    else yield `${formatTextLine(event, agents)}\n`;
  }
}

/**
 * The raw replay: every complete line as written, quarantined ones included (DESIGN §5), in merged order,
 * each followed by `\n`. Bytes, because a quarantined line may not be valid UTF-8.
 */
export async function* replayRaw(
  sources: MergeSource[],
  options: MergeOptions = {},
): AsyncGenerator<Uint8Array> {
  const NL = Buffer.from('\n');
  for await (const item of mergeSegmentsKeepingProblems(sources, options)) {
    if ('event' in item) yield Buffer.from(`${item.event.raw}\n`, 'utf8');
    else yield Buffer.concat([item.problem.bytes, NL]);
  }
}

const MAX_WHAT = 240;

/**
 * One readable line for an event: `ts  who  type  what`. `agents` maps writer ids to the agent named in
 * their `writer.start` (filled as events pass), so an agent's events are shown under its name.
 */
export function formatTextLine(ev: RecordedEvent, agents: Map<string, string>): string {
  const o = ev.obj;
  if (ev.type === 'writer.start') {
    const meta = (o.meta ?? {}) as Record<string, unknown>;
    if (typeof meta.agent === 'string' && meta.agent) agents.set(ev.w, meta.agent);
  }
  const who = whoOf(ev, agents);
  const what = oneLine(whatOf(ev));
  return `${ev.ts}  ${who.padEnd(14)}  ${ev.type.padEnd(19)}  ${what}`.trimEnd();
}

function whoOf(ev: RecordedEvent, agents: Map<string, string>): string {
  const o = ev.obj;
  switch (ev.type) {
    case 'message':
    case 'participant.join':
    case 'participant.leave':
      return str(o.user_id) || '?';
    case 'note':
      return str(o.author) || agents.get(ev.w) || ev.w;
    default:
      return agents.get(ev.w) ?? ev.w;
  }
}

function whatOf(ev: RecordedEvent): string {
  const o = ev.obj;
  switch (ev.type) {
    case 'writer.start': {
      const m = (o.meta ?? {}) as Record<string, unknown>;
      return `writer ${ev.w} starts (agent ${show(m.agent)}, app ${show(m.app)}, host ${show(m.host)}, pid ${show(m.pid)})`;
    }
    case 'participant.join':
      return `joins${o.display_name ? ` as ${str(o.display_name)}` : ''}`;
    case 'participant.leave':
      return 'leaves';
    case 'message':
      return `${ev.id}: ${str(o.text)}`;
    case 'turn.start': {
      const ctx = o.context_message_ids;
      const c = Array.isArray(ctx)
        ? ctx.length
          ? `context ${ctx.join(', ')}`
          : 'context: none (recorded)'
        : 'no context recorded';
      return `${str(o.turn_id) || ev.id} begins; ${c}`;
    }
    case 'agent.action':
      return `${ev.id} ${str(o.tool)} ${compactJson(o.input)}${causes(o.caused_by)}`;
    case 'agent.action_result': {
      const exit = o.exit_code === null || o.exit_code === undefined ? '' : ` exit ${show(o.exit_code)}`;
      const body = o.error ? str(o.error) : compactJson(o.output);
      return `${str(o.action_id)} ${str(o.status)}${exit}: ${body}`;
    }
    case 'agent.output':
      return `${str(o.text)}${causes(o.caused_by)}`;
    case 'turn.end':
      return `${str(o.turn_id)} ends: ${str(o.status)}`;
    case 'note':
      return str(o.text);
    case 'correction':
      return `${str(o.target_id)}.${str(o.field)} := ${compactJson(o.value)} (${str(o.reason)})`;
    case 'writer.end':
      return `writer ${ev.w} ends${o.reason ? `: ${str(o.reason)}` : ''}`;
    default: {
      const rest: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(o)) {
        if (!['v', 'sid', 'w', 'seq', 'id', 'ts', 'mono', 'type'].includes(k)) rest[k] = v;
      }
      return `(unknown type) ${compactJson(rest)}`;
    }
  }
}

function causes(c: unknown): string {
  if (!Array.isArray(c)) return '';
  return c.length ? ` [caused by ${c.join(', ')}]` : ' [caused by nothing (recorded)]';
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : v === null || v === undefined ? '' : JSON.stringify(v);
}

function show(v: unknown): string {
  return v === null || v === undefined ? '-' : String(v);
}

function compactJson(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** Newlines and tabs shown as `⏎` and spaces, cut to a screen line. */
function oneLine(s: string): string {
  const flat = s.replace(/\r?\n/g, ' ⏎ ').replace(/\t/g, ' ');
  return flat.length > MAX_WHAT ? `${flat.slice(0, MAX_WHAT - 1)}…` : flat;
}
