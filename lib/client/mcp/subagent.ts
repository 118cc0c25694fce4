/**
 * `capture_subagent_messages` (issue 12 item 3, docs/mcp.md): a subagent's messages become a writer of
 * their own in the session, so the subagent's work is in the merged transcript. The segment is written
 * with the library's writer (`openSession`, redaction on) into `<state>/mcp-spool/<call>/<sid>/` and
 * shipped with `uploadSession`, as `hansard upload` does; once the server holds it the folder goes. A
 * segment the server did not take stays there, and the error names the `hansard upload` that ships it.
 *
 * Mapping: a `user` message is a `message` (from `from`, default `parent-agent`) and ends an open turn;
 * an `assistant` message is an `agent.output` in a turn opened for it (its context the messages since the
 * last turn); a `tool` message is an `agent.action` and its `agent.action_result` in that turn (status
 * from the exit code when there is one). The writer's `writer.start` meta names the subagent
 * (`subagent_id`, `parent_action_id`) as the importers do for a subagent's segment.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { ACTION_STATUSES } from '../../log/format/events.js';
import { isId } from '../../log/format/ids.js';
import { openSession, type SessionWriter } from '../../log/write/writer.js';
import { HANSARD_VERSION } from '../../version.js';
import { uploadSession } from '../api/upload.js';
import { stateDir } from '../capture/state-dir.js';
import { type ToolResult, toolError } from './errors.js';
import { type ResolveContext, type ResolvedSession, resolveSession, serverUrl } from './session.js';
import { clientOf, SessionTokenInput } from './tools.js';

/** Most messages one call takes; a longer conversation is captured in several calls (writers). */
export const MAX_SUBAGENT_MESSAGES = 500;
/** Longest text of one message, in characters (the writer cuts longer fields anyway: DESIGN §3). */
export const MAX_MESSAGE_CHARS = 100_000;
/**
 * Most characters of text, output and input (as JSON) one call takes, all messages together (issue 24
 * item 5): a call within every limit here always fits in the 10 MiB one stdio message may be
 * (./line-limit.ts). JSON writes a character in at most 6 bytes (`\u0000`), so 6,000,000 bytes, plus
 * at most ~1.3 MB for 500 messages' other fields at their limits; test/client/mcp/line-limit.test.ts checks it.
 */
export const MAX_CALL_CHARS = 1_000_000;

const Text = z.string().max(MAX_MESSAGE_CHARS, `a message is at most ${MAX_MESSAGE_CHARS} characters`);
// bounded: a time's fraction of a second may have any number of digits, and every field of a call must
// be, for the call to fit in one stdio message (MAX_CALL_CHARS)
const Ts = z.iso
  .datetime({ offset: true })
  .max(40, 'a time is at most 40 characters')
  .optional()
  .describe('when it was said (RFC 3339); default: when captured');

/** One message of the subagent's conversation. */
export const SubagentMessage = z.discriminatedUnion('role', [
  z.strictObject({
    role: z.literal('user'),
    text: Text.describe('what the subagent was told (its prompt, or a later message to it)'),
    from: z.string().min(1).max(120).optional().describe('who said it; default parent-agent'),
    ts: Ts,
  }),
  z.strictObject({
    role: z.literal('assistant'),
    text: Text.describe("the subagent's own words"),
    ts: Ts,
  }),
  z.strictObject({
    role: z.literal('tool'),
    tool: z.string().min(1).max(200).describe('the tool the subagent called, e.g. Bash'),
    call_id: z.string().min(1).max(200).optional().describe("the tool call's id, when there is one"),
    input: z.unknown().optional().describe("the call's input"),
    output: Text.optional().describe("the call's output"),
    exit_code: z.number().int().min(-65_535).max(65_535).optional(),
    status: z
      .enum(ACTION_STATUSES)
      .optional()
      .describe('default: from exit_code (0 ok, else error), else ok'),
    ts: Ts,
  }),
]);
export type SubagentMessage = z.infer<typeof SubagentMessage>;

/** What a message counts towards `MAX_CALL_CHARS`: its text, or its output and its input as JSON. */
export function messageChars(m: SubagentMessage): number {
  if (m.role !== 'tool') return m.text.length;
  return (m.output?.length ?? 0) + (m.input === undefined ? 0 : (JSON.stringify(m.input)?.length ?? 0));
}

/** `capture_subagent_messages`'s input. */
export const CaptureSubagentInput = z.strictObject({
  messages: z
    .array(SubagentMessage)
    .min(1)
    .max(MAX_SUBAGENT_MESSAGES, `at most ${MAX_SUBAGENT_MESSAGES} messages a call`)
    .refine(
      (ms) => ms.reduce((n, m) => n + messageChars(m), 0) <= MAX_CALL_CHARS,
      `at most ${MAX_CALL_CHARS.toLocaleString('en-US')} characters of text, output and input a call: send the rest in another call`,
    ),
  agent: z.string().min(1).max(120).default('subagent').describe("the subagent's name (its writer's agent)"),
  subagent_id: z.string().min(1).max(200).optional().describe("the harness's id of the subagent"),
  parent_action_id: z
    .string()
    .refine((a) => isId('a', a), 'an action id: a_ followed by a ULID')
    .optional()
    .describe('the recorded action that launched the subagent, when known'),
  session_token: SessionTokenInput,
});
export type CaptureSubagentInput = z.infer<typeof CaptureSubagentInput>;

/** Registers `capture_subagent_messages` on `server`. */
export function registerSubagentTool(server: McpServer, ctx: ResolveContext): void {
  server.registerTool(
    'capture_subagent_messages',
    {
      title: "Capture a subagent's messages",
      description:
        "Append a subagent's conversation to this hansard session as a writer of its own (user prompts, its answers, its tool calls with their results), so its work is in the session's merged transcript. At most 500 messages and 1,000,000 characters of text, output and input a call: capture a longer conversation in several calls.",
      inputSchema: CaptureSubagentInput,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    async (args) => {
      let s: ResolvedSession | null = null;
      try {
        s = await resolveSession(args.session_token, ctx);
        return await captureSubagent(s, args, ctx);
      } catch (err) {
        return toolError(err, s?.url ?? serverUrl(ctx));
      }
    },
  );
}

/** Writes the segment, uploads it, removes it once shipped. @throws ServerError, NetworkError, fs errors */
async function captureSubagent(
  s: ResolvedSession,
  args: CaptureSubagentInput,
  ctx: ResolveContext,
): Promise<ToolResult> {
  const spool = spoolFolder(ctx.env);
  const w = writeSegment(spool, s.sid, args);
  const dir = join(spool, s.sid);
  let length: number;
  try {
    const up = await uploadSession(dir, { client: clientOf(s, s.ingestToken) });
    length = up.segments.find((x) => x.w === w.w)?.length ?? 0;
  } catch (err) {
    const kept = `the segment is kept in ${dir}: \`hansard upload ${dir}\` ships it`;
    const result = toolError(err, s.url);
    result.content[0]!.text += `\n${kept}`;
    return result;
  }
  rmSync(spool, { recursive: true, force: true });
  const text = `captured ${args.messages.length} message${args.messages.length === 1 ? '' : 's'} of ${args.agent} as writer ${w.w} of ${s.sid} (${length} bytes uploaded)`;
  return { content: [{ type: 'text', text }] };
}

/** A fresh folder for one call's segment: under `<state>/mcp-spool/`, else the system's temp folder. */
function spoolFolder(env: NodeJS.ProcessEnv): string {
  const root = join(stateDir(env), 'mcp-spool');
  try {
    mkdirSync(root, { recursive: true, mode: 0o700 });
    return mkdtempSync(join(root, 'call-'));
  } catch {
    return mkdtempSync(join(tmpdir(), 'hansard-mcp-'));
  }
}

/**
 * The subagent's segment in `<spool>/<sid>/` (the mapping is this module's doc). Event times follow the
 * messages' `ts` where given, never going back and never ahead of now. Returns its writer id and how many
 * events it holds. @throws WriterError, fs errors
 */
export function writeSegment(
  spool: string,
  sid: string,
  args: Pick<CaptureSubagentInput, 'messages' | 'agent' | 'subagent_id' | 'parent_action_id'>,
): { w: string; events: number } {
  const nowUs = () => Date.now() * 1000;
  const first = args.messages[0]!.ts;
  let cursor = Math.min(first ? Date.parse(first) * 1000 : nowUs(), nowUs());
  const at = (ts: string | undefined) => {
    cursor = Math.min(Math.max(cursor, ts ? Date.parse(ts) * 1000 : nowUs()), nowUs());
    return cursor;
  };
  const w: SessionWriter = openSession(
    spool,
    {
      sid,
      agent: args.agent,
      app: `hansard mcp ${HANSARD_VERSION}`,
      // What the model hands over is its own word, never an observation (issue 24 item 1).
      provenance: 'declared',
      extra: {
        subagent_id: args.subagent_id ?? null,
        parent_writer: null,
        parent_action_id: args.parent_action_id ?? null,
      },
    },
    { clock: () => cursor },
  );
  let events = 1;
  let turn: string | null = null;
  let context: string[] = [];
  const openTurn = (o: { at: number }): string => {
    if (turn === null) {
      turn = w.turnStart({ context_message_ids: context }, o).turn_id;
      context = [];
      events++;
    }
    return turn;
  };
  const closeTurn = (): void => {
    if (turn === null) return;
    w.turnEnd({ turn_id: turn, status: 'completed' });
    turn = null;
    events++;
  };
  try {
    for (const m of args.messages) {
      const o = { at: at(m.ts) };
      if (m.role === 'user') {
        closeTurn();
        context.push(w.message({ user_id: m.from ?? 'parent-agent', text: m.text }, o).id);
        events++;
      } else if (m.role === 'assistant') {
        w.output({ turn_id: openTurn(o), text: m.text }, o);
        events++;
      } else {
        const a = w.action(
          { turn_id: openTurn(o), tool: m.tool, input: m.input ?? null, call_id: m.call_id ?? null },
          o,
        );
        const status = m.status ?? (m.exit_code === undefined ? 'ok' : m.exit_code === 0 ? 'ok' : 'error');
        w.actionResult(
          { action_id: a.id, status, output: m.output ?? null, exit_code: m.exit_code ?? null },
          o,
        );
        events += 2;
      }
    }
    closeTurn();
    w.end({ reason: 'captured by hansard mcp' });
    events++;
  } finally {
    w.close();
  }
  return { w: w.w, events };
}
