/**
 * The status tools of `hansard mcp serve` (issue 12 item 3, seed 000 "Agent status and declared events",
 * docs/mcp.md): `report_status` posts a report (`POST /v1/sessions/{sid}/status`) and `session_context`
 * says which session this is, its latest report, its open work and the project context a session-start
 * hook gives. Both talk to the server over HTTP only (`ApiClient`).
 *
 * Answers are text only, no `structuredContent`: Claude Code 2.1.328 hands the model the structured
 * content instead of the text when there is one (seen in test/real-client/claude-mcp.test.ts), and the
 * text is what is written for the model.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { StatusReport } from '../../contract/status.js';
import { escapeControl } from '../../log/format/escape.js';
import { ApiClient, ServerError } from '../api/client.js';
import { sessionStartOutput } from '../capture/session-start.js';
import { type ToolResult, toolError } from './errors.js';
import { type ResolveContext, type ResolvedSession, resolveSession, serverUrl } from './session.js';

/** `session_token`, optional on every tool: Claude Code and Codex leave it out (seed 000). */
export const SessionTokenInput = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe(
    'a hansard session token, when the harness gave you one; leave it out otherwise (the server finds the session)',
  );

/**
 * `report_status`'s input: the API's own `StatusReport` (so the limits and their messages are the API's:
 * note ≤ 240 characters, ≤ 4 events × ≤ 4 evidence items, ref ≤ 160 characters) and `session_token`.
 */
export const ReportStatusInput = StatusReport.extend({ session_token: SessionTokenInput });

/** A client of the resolved session's server; tool calls retry a transient failure twice, briefly. */
export function clientOf(s: ResolvedSession, token = s.token): ApiClient {
  return new ApiClient({ url: s.url, token, retries: 2, minTimeoutMs: 200 });
}

/** Registers `report_status` and `session_context` on `server`. */
export function registerStatusTools(server: McpServer, ctx: ResolveContext): void {
  server.registerTool(
    'report_status',
    {
      title: 'Report status to hansard',
      description:
        'Post a status report for this session: state working, blocked, needs_review or done, a one-line note (at most 240 characters), and optionally up to 4 declared events with up to 4 evidence items each. A report is a declaration, not proof: command and test evidence is checked against the recorded transcript.',
      inputSchema: ReportStatusInput,
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
        const body = { state: args.state, note: args.note, events: args.events };
        const res = await clientOf(s).request('POST', `/v1/sessions/${s.sid}/status`, {
          body: JSON.stringify(body),
          contentType: 'application/json',
        });
        const view = res.body as Record<string, unknown>;
        const lines = [`reported ${args.state} for ${s.sid}`, ...(await readVerdicts(clientOf(s), s.sid))];
        if (view.writers === 0) {
          lines.push(
            `note: the server has no segments of ${s.sid} yet (normal right at the start; otherwise check the session)`,
          );
        }
        return { content: [{ type: 'text', text: lines.join('\n') }] } as ToolResult;
      } catch (err) {
        return toolError(err, s?.url ?? serverUrl(ctx));
      }
    },
  );

  server.registerTool(
    'session_context',
    {
      title: 'hansard session context',
      description:
        "This session's hansard identity, its latest status report, its open work, and the project context a session-start hook gives (with the reporting instructions).",
      inputSchema: z.strictObject({ session_token: SessionTokenInput }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) => {
      let s: ResolvedSession | null = null;
      try {
        s = await resolveSession(args.session_token, ctx);
        return await sessionContext(s, ctx);
      } catch (err) {
        return toolError(err, s?.url ?? serverUrl(ctx));
      }
    },
  );
}

/**
 * The verdicts of the session's kept reports, as `verdictLines` gives them. The POST's answer does not
 * check claims (its items say "checked … when the status is read"): the verdicts come from
 * `GET /v1/sessions/{sid}/status` (docs/mcp.md `report_status`). A failed read never fails the report:
 * it is stored, and the line says where the verdicts are.
 */
async function readVerdicts(client: ApiClient, sid: string): Promise<string[]> {
  try {
    const read = await client.request('GET', `/v1/sessions/${sid}/status`);
    return verdictLines(read.body as Record<string, unknown>);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return [
      `the report was stored; its evidence verdicts could not be read now (${why}): they come with session_context`,
    ];
  }
}

/** `session_context`'s answer for a resolved session. @throws ServerError, NetworkError */
async function sessionContext(s: ResolvedSession, ctx: ResolveContext): Promise<ToolResult> {
  const client = clientOf(s);
  const status = await latestStatus(client, s.sid);
  const work = await openWork(client, s.sid);
  // seed 000: the switch changes the instructions only; reports with events are always accepted.
  const declaredEvents = ctx.env.HANSARD_DECLARED_EVENTS === '1';
  const project = sessionStartOutput({
    sid: s.sid,
    cwd: s.cwd,
    // The agent reports through this server's tools: no token goes into the text.
    token: null,
    // Only a hook of this machine records the session; a token alone says nothing of that.
    shipping: s.hookedHere ? `shipped to ${s.url}` : `reports go to ${s.url}`,
    recorded: s.hookedHere,
    declaredEvents,
  }).hookSpecificOutput.additionalContext;
  const lines = [
    `Session: ${s.sid} (found through ${s.source}${s.claudeSessionId ? `, Claude Code session ${s.claudeSessionId}` : ''}; server ${s.url})`,
    `Latest status: ${status ? statusLine(status) : 'none yet'}`,
    ...(status ? verdictLines(status) : []),
    `Open work: ${work.text}`,
    ...work.lines,
    'Project context:',
    project,
    ...(s.cwdFrom === 'mcp server'
      ? [
          `(The project folder above is this MCP server's working directory: the session was found through ${s.source}, which does not say where the session runs.)`,
        ]
      : []),
    'Through this MCP server, report with the report_status tool (leave session_token out unless you were given one).',
    ...(declaredEvents
      ? [
          "Declare events there in report_status's events: the same array as --events above, with the same limits.",
        ]
      : []),
  ];
  return { content: [{ type: 'text', text: lines.join('\n') }] };
}

/**
 * `GET /v1/sessions/{sid}/status`, or null when nothing was reported yet. Only the 404 that says so
 * ("status not found") is "none yet": a session this token may not see is a 404 too, and an error.
 * @throws ServerError, NetworkError
 */
async function latestStatus(client: ApiClient, sid: string): Promise<Record<string, unknown> | null> {
  try {
    return (await client.request('GET', `/v1/sessions/${sid}/status`)).body as Record<string, unknown>;
  } catch (err) {
    if (err instanceof ServerError && err.status === 404 && err.message === 'status not found') return null;
    throw err;
  }
}

/** One line for a status view: its state, note, time and declared events (the fields any version has). */
function statusLine(v: Record<string, unknown>): string {
  const events = Array.isArray(v.events) ? v.events.length : 0;
  const note = typeof v.note === 'string' && v.note ? ` "${v.note}"` : '';
  return `${String(v.state)}${note} (reported ${String(v.reported_at)}; ${events} declared event${events === 1 ? '' : 's'})`;
}

/**
 * The evidence verdicts of a status view (issue 12 item 2: `evidence` counts and each item's `check`,
 * computed by the server on read), as lines for the agent: the counts, then each unsupported claim of
 * the latest report with the server's reason. Nothing when the view has no evidence or no verdicts.
 */
export function verdictLines(v: Record<string, unknown>): string[] {
  const c = v.evidence as
    | { supported?: unknown; unsupported?: unknown; unchecked?: unknown; contested?: unknown }
    | undefined;
  if (!c || typeof c.supported !== 'number') return [];
  const total = Number(c.supported) + Number(c.unsupported ?? 0) + Number(c.unchecked ?? 0);
  if (total === 0) return [];
  const lines = [
    `Declared evidence (all kept reports): ${c.supported} supported, ${String(c.unsupported)} unsupported${Number(c.contested) > 0 ? ` (${String(c.contested)} contested)` : ''}, ${String(c.unchecked)} unchecked`,
  ];
  const events = Array.isArray(v.events) ? (v.events as { evidence?: unknown }[]) : [];
  for (const e of events) {
    for (const item of Array.isArray(e.evidence) ? (e.evidence as Record<string, unknown>[]) : []) {
      const check = item.check as { verdict?: unknown; reason?: unknown; contested?: unknown } | undefined;
      if (check?.verdict !== 'unsupported') continue;
      const label =
        Array.isArray(check.contested) && check.contested.length > 0 ? 'contested' : 'unsupported';
      lines.push(
        `- ${label}: ${String(item.type)} ${String(item.ref)} ${String(item.result)}: ${String(check.reason)}`,
      );
    }
  }
  return lines;
}

/**
 * The session's open work: its work leases (`GET /v1/work?session=`, docs/work.md) whose state is not
 * `stopped`, each as a line with its freshness word (`observed`, `unknown`: seed 004's two observations)
 * and what it waits on. A server without the route answers 404: "none recorded".
 * @throws ServerError other than 404, NetworkError
 */
export async function openWork(client: ApiClient, sid: string): Promise<{ text: string; lines: string[] }> {
  const res = await client.request('GET', `/v1/work?session=${encodeURIComponent(sid)}&limit=500`, {
    allow404: true,
  });
  if (res.status === 404) return { text: 'none recorded', lines: [] };
  const body = res.body as { items?: unknown };
  const all = Array.isArray(body?.items) ? (body.items as Record<string, unknown>[]) : [];
  const items = all.filter((i) => i && i.state !== 'stopped');
  if (all.length === 0) return { text: 'none recorded', lines: [] };
  if (items.length === 0) return { text: `none open (${all.length} stopped)`, lines: [] };
  return {
    text: `${items.length} open item${items.length === 1 ? '' : 's'}`,
    lines: items.map(workLine),
  };
}

/** `- <id> <mode> "<summary>": <freshness>[; waiting on <kind>[:<ref>]: <reason>]`, one line. */
function workLine(i: Record<string, unknown>): string {
  const f = i.freshness as { shown?: unknown } | undefined;
  const w = i.waiting_on as { dependency?: { kind?: unknown; ref?: unknown }; reason?: unknown } | null;
  const dep = w?.dependency;
  const waiting = dep
    ? `; waiting on ${String(dep.kind)}${dep.ref ? `:${String(dep.ref)}` : ''}: ${oneLine(w?.reason)}`
    : '';
  return `- ${String(i.id)} ${oneLine(i.mode)} "${oneLine(i.summary)}": ${String(f?.shown ?? 'unknown')}${waiting}`;
}

/** A reported string with control characters escaped (`escapeControl`): one line for the model. */
function oneLine(v: unknown): string {
  return escapeControl(String(v ?? ''));
}
