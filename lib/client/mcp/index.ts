/**
 * hansard's MCP server (issue 12 item 3, docs/mcp.md): `hansard mcp serve [--status]` over stdio with the
 * status tools `report_status`, `session_context` and `capture_subagent_messages`.
 */
export { createMcpServer, type McpServeOptions, STATUS_TOOLS, serveMcp } from './server.js';
export { type ResolvedSession, resolveSession, SessionUnresolved } from './session.js';
