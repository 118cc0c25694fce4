/**
 * `hansard mcp serve [--status]` (issue 12 item 3, docs/mcp.md): hansard's MCP server over stdio. The
 * server is loaded on use, so other commands do not pay for the MCP SDK. `bin/hansard` runs `mcp serve`
 * from its own small bundle (`dist/mcp.js`) to start fast; this registration serves `--help` and the
 * in-process runs of the tests.
 */
import type { Command } from 'commander';
import type { Io } from '../api/io.js';

export function registerMcp(program: Command, io: Io): void {
  const mcp = program.command('mcp').description("hansard's MCP server for agents (docs/mcp.md)");
  mcp
    .command('serve')
    .description(
      'serve MCP over stdio: report_status, session_context, capture_subagent_messages (stdout is the protocol; logs go to stderr)',
    )
    .option('--status', 'the status tools only: no messaging or helper launches (hansard has none yet)')
    .addHelpText(
      'after',
      `
The session: the call's session_token, else HANSARD_SESSION_TOKEN (alone is enough: the server says
which session a session token is bound to; HANSARD_SESSION_ID beside it names the session without
asking), else HANSARD_SESSION_ID with HANSARD_TOKEN, else the live Claude Code session hansard's hooks
capture in this directory. A session token: hansard token create --scopes report,ingest --session s_…
The server: HANSARD_URL, else <state>/config.json (hansard integrations sync writes it).

Claude Code:  claude mcp add hansard -- hansard mcp serve --status
Codex:        [mcp_servers.hansard] command = "hansard", args = ["mcp", "serve", "--status"]`,
    )
    .action((o: McpServeOptions) => mcpServe(o, io));
}

/** The options of `hansard mcp serve`, as commander parses them. */
export interface McpServeOptions {
  status?: boolean;
}

/**
 * `hansard mcp serve`: the MCP server on stdio (lib/client/mcp), with the status tool only when
 * `--status`.
 */
export async function mcpServe(o: McpServeOptions, io: Io): Promise<void> {
  const { serveMcp } = await import('../mcp/index.js');
  await serveMcp({ env: io.env, cwd: io.cwd, statusOnly: !!o.status });
}
