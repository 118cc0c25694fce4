/**
 * What an MCP tool answers when it fails (docs/mcp.md): a tool result with `isError: true` and one text
 * that says what went wrong and what to do, never a stack trace. The SDK turns a thrown error into such
 * a result itself; these are the sentences.
 */

import { maskTokens } from '../../log/redact/mask-tokens.js';
import { NetworkError, ServerError } from '../api/client.js';
import { UsageError } from '../api/errors.js';
import { MAKE_SESSION_TOKEN, SessionUnresolved } from './session.js';

/** A tool result as the MCP SDK takes it. */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  isError?: boolean;
}

/** A tool's failure as an MCP tool error result. */
export function toolError(err: unknown, url: string | null): ToolResult {
  return { isError: true, content: [{ type: 'text', text: describe(err, url) }] };
}

/**
 * One sentence (and the server's field issues, one a line) for a failed call, with every `hns_` secret
 * masked (lib/log/redact/mask-tokens.ts): a tool result goes into the agent's transcript (the trial of issue 24,
 * item 12).
 */
export function describe(err: unknown, url: string | null): string {
  return maskTokens(sentence(err, url));
}

function sentence(err: unknown, url: string | null): string {
  if (err instanceof SessionUnresolved || err instanceof UsageError) return err.message;
  if (err instanceof ServerError) {
    const lines = [`the hansard server refused: ${err.message} (${err.status} ${err.code})`];
    const issues = Array.isArray(err.details.issues)
      ? (err.details.issues as { path?: unknown; message?: unknown }[])
      : [];
    for (const i of issues.slice(0, 10)) {
      lines.push(`- ${i.path ? `${String(i.path)}: ` : ''}${String(i.message ?? '')}`);
    }
    if (err.status === 401) {
      lines.push(
        `the token is not valid (expired or revoked): use a new session token; ${MAKE_SESSION_TOKEN}; in Claude Code a new session gets one from hansard's SessionStart hook`,
      );
    }
    if (err.status === 403)
      lines.push('the token lacks a scope this needs (report to post, ingest to upload)');
    return lines.join('\n');
  }
  if (err instanceof NetworkError) {
    return `${err.message}: is the hansard server running? Start it with \`hansard serve\`, or point HANSARD_URL (or <state>/config.json) at the one you use${url ? ` (now ${url})` : ''}`;
  }
  return `hansard: unexpected error: ${err instanceof Error ? err.message : String(err)}`;
}
