/**
 * `hansard mcp serve [--status]` (issue 12 item 3, seed 000, docs/mcp.md): an MCP server over stdio built
 * on the official MCP TypeScript SDK. stdout carries the protocol's JSON-RPC lines only: one stray line
 * breaks the client, so `console.log` and friends go to stderr while it runs.
 *
 * `--status` exposes the status tools only (`report_status`, `session_context`,
 * `capture_subagent_messages`), without messaging or helper launches. hansard has no such other tools yet,
 * so both modes expose the same three today; the flag is what a client names to stay on the status set
 * when the others come.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { HANSARD_VERSION } from '../../version.js';
import { LineLimit, MAX_MESSAGE_BYTES, oversizeAnswer, oversizeSentence } from './line-limit.js';
import type { ResolveContext } from './session.js';
import { registerSubagentTool } from './subagent.js';
import { registerStatusTools } from './tools.js';

/** What `hansard mcp serve` is given. */
export interface McpServeOptions extends ResolveContext {
  /** `--status`: the status tools only */
  statusOnly: boolean;
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
  stderr?: { write(s: string): unknown };
}

/** The tools of the status set (seed 000), in the order `tools/list` gives them. */
export const STATUS_TOOLS = ['report_status', 'session_context', 'capture_subagent_messages'] as const;

/** An MCP server with hansard's tools registered (not connected). */
export function createMcpServer(opts: Pick<McpServeOptions, 'env' | 'cwd' | 'statusOnly'>): McpServer {
  const server = new McpServer(
    { name: 'hansard', title: 'hansard', version: HANSARD_VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        'hansard records this session. Report progress with report_status (working, blocked, needs_review, done; a one-line note); session_context says which session this is and what was last reported. Leave session_token out unless you were given one.',
    },
  );
  // A token's bound session is asked of the server once and kept for this server's life.
  const ctx: ResolveContext = { env: opts.env, cwd: opts.cwd, boundSessions: new Map() };
  registerStatusTools(server, ctx);
  registerSubagentTool(server, ctx);
  // Tools beyond the status set (messaging, helper launches) will be registered here when !statusOnly.
  return server;
}

/**
 * Serves MCP on stdin/stdout until stdin ends (the client closed the pipe) or the transport fails.
 * Resolves then, with the server closed. A JSON-RPC line over `MAX_MESSAGE_BYTES` (10 MiB) is answered
 * with an error naming the limit and the server goes on (issue 24 item 5, ./line-limit.ts).
 */
export async function serveMcp(opts: McpServeOptions): Promise<void> {
  const stderr = opts.stderr ?? process.stderr;
  keepStdoutForProtocol(stderr);
  const stdin = opts.stdin ?? process.stdin;
  const server = createMcpServer(opts);
  // A line over the SDK's 10 MiB never reaches its transport (which would close): it is answered here.
  const lines = new LineLimit(MAX_MESSAGE_BYTES, (line) => {
    stderr.write(`hansard mcp: ${oversizeSentence(line, MAX_MESSAGE_BYTES)}\n`);
    const answer = oversizeAnswer(line, MAX_MESSAGE_BYTES);
    if (answer) transport.send(answer).catch(() => {});
  });
  stdin.pipe(lines);
  const transport = new StdioServerTransport(
    lines,
    (opts.stdout ?? process.stdout) as ConstructorParameters<typeof StdioServerTransport>[1],
  );
  const done = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    stdin.once('end', () => resolve());
    stdin.once('close', () => resolve());
  });
  transport.onerror = (err) => stderr.write(`hansard mcp: ${err.message}\n`);
  await server.connect(transport);
  await done;
  await server.close().catch(() => {});
}

/** Sends what the console would print on stdout to stderr instead (the SDK and libraries may log). */
function keepStdoutForProtocol(stderr: { write(s: string): unknown }): void {
  const toStderr = (...args: unknown[]) => {
    stderr.write(`${args.map((a) => (typeof a === 'string' ? a : String(a))).join(' ')}\n`);
  };
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}
