/**
 * Which hansard session an MCP tool call acts on, and with which token (issue 12 item 3, seed 000,
 * docs/mcp.md "Session resolution"). In order:
 *
 * 1. the call's `session_token`, else `HANSARD_SESSION_TOKEN`: a session-bound token, refused unless it
 *    has the form of a hansard token (`hns_` + 43 letters and digits; lib/client/api/token-form.ts), without
 *    quoting it and before any request. Its session is
 *    `HANSARD_SESSION_ID`, else the hook state entry minted with that token, else the session the server
 *    says the token is bound to (`GET /v1/tokens/self`, asked once per token and kept for the server's
 *    life: a token's binding never changes; issue 24 item 5, seed 000);
 * 2. `HANSARD_SESSION_ID` with the server's token (`HANSARD_TOKEN`, else `<state>/config.json`);
 * 3. the Claude Code hook's state (`<state>/claude-code/*.json`): among the sessions not ended whose `cwd`
 *    is the MCP server's working directory, the one whose state file was written last (every hook writes
 *    it, so that is the session active most recently). Claude Code starts its MCP servers in the project
 *    directory, the `cwd` its hooks report;
 * 4. otherwise a `SessionUnresolved` error saying what to set.
 *
 * Nothing here writes to stdout (it is the MCP protocol's).
 */
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isId } from '../../log/format/ids.js';
import { ApiClient, ServerError } from '../api/client.js';
import { DEFAULT_URL } from '../api/config.js';
import { malformedTokenMessage, tokenFormProblem } from '../api/token-form.js';
import { fetchTokenSelf } from '../api/token-self.js';
import type { ClaudeState } from '../capture/claude-code.js';
import { readCaptureConfig, readJson, stateDir } from '../capture/state-dir.js';

/** How a session was found, for `session_context` and error messages. */
export type SessionSource =
  | 'session_token'
  | 'HANSARD_SESSION_TOKEN'
  | 'HANSARD_SESSION_ID'
  | 'claude-code hook state';

/** The session a tool call acts on. */
export interface ResolvedSession {
  sid: string;
  /** the server's base URL (no trailing slash) */
  url: string;
  /** the token for status reports and reads: the session-bound one when there is one */
  token: string;
  /**
   * the token for uploads (`ingest` scope): the hook's shipping token (`<state>/config.json` or
   * `HANSARD_TOKEN`) for a session found in the hook's state, whose minted token has `report` only
   */
  ingestToken: string;
  source: SessionSource;
  /** the project directory: the hook state's `cwd`, else the MCP server's working directory */
  cwd: string;
  /** where `cwd` comes from: the session's hook state, or the MCP server's own working directory */
  cwdFrom: 'hook state' | 'mcp server';
  /** Claude Code's own session id, when the session came from the hook's state */
  claudeSessionId: string | null;
  /**
   * whether a hansard hook on this machine is known to record the session (the Claude Code hook's state
   * holds it): false for a session known only from a token or `HANSARD_SESSION_ID`, of which nothing here
   * says that anything records it (`session_context` says only what is known)
   */
  hookedHere: boolean;
}

/**
 * How a person makes a session token, for the messages (docs/api.md "Session tokens for a harness"): the
 * CLI with an admin token, or the API with any unbound token holding the scopes; in Claude Code the
 * SessionStart hook mints one for every new session. Scopes: `report` for reports and reads, `ingest` for
 * subagent captures (the API's default pair).
 */
export const MAKE_SESSION_TOKEN =
  'make one with `hansard token create --scopes report,ingest --session s_…` (an admin token), or POST /v1/sessions/s_…/tokens with a token bound to no session';

/** No session could be resolved: the message says what to set. */
export class SessionUnresolved extends Error {
  override name = 'SessionUnresolved';
}

/** What resolution reads: the server's environment and working directory. */
export interface ResolveContext {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /**
   * The session each token is bound to (null: none), as `GET /v1/tokens/self` answered, by server URL and
   * token; kept for the MCP server's life. A failed request is not kept. Absent: asked at every call.
   */
  boundSessions?: Map<string, Promise<string | null>>;
}

/** A Claude Code session from the hook's state, as `liveClaudeSessions` lists it. */
export interface HookSession {
  claudeSessionId: string;
  sid: string;
  cwd: string;
  /** the state file's mtime, ms since the epoch */
  writtenAt: number;
  /** the minted session token, when it is valid for another minute */
  token: string | null;
}

/** A minted token used until this close to its expiry (the hook mints a fresh one at the next start). */
const EXPIRY_MARGIN_MS = 60_000;

/**
 * The Claude Code sessions of the hook state whose writer has not ended and whose `cwd` is `cwd` (both
 * resolved through symlinks), most recently written first. An absent or unreadable state gives [].
 */
export function liveClaudeSessions(state: string, cwd: string, now = Date.now()): HookSession[] {
  const dir = join(state, 'claude-code');
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const here = canonical(cwd);
  const out: HookSession[] = [];
  for (const name of names) {
    const path = join(dir, name);
    const st = readJson(path) as Partial<ClaudeState> | null;
    if (st?.version !== 1 || typeof st.sid !== 'string' || !isId('s', st.sid)) continue;
    if (st.main?.ended !== false || typeof st.cwd !== 'string' || canonical(st.cwd) !== here) continue;
    let writtenAt: number;
    try {
      writtenAt = statSync(path).mtimeMs;
    } catch {
      continue;
    }
    const t = st.token;
    const valid = t && typeof t.token === 'string' && Date.parse(t.expires_at) - now > EXPIRY_MARGIN_MS;
    out.push({
      claudeSessionId: decodeName(name.slice(0, -5)),
      sid: st.sid,
      cwd: st.cwd,
      writtenAt,
      token: valid ? t.token : null,
    });
  }
  return out.sort((a, b) => b.writtenAt - a.writtenAt);
}

/** A state file's name back to Claude's session id (`mappingStatePath` %-encodes it); as is when malformed. */
function decodeName(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

function canonical(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/** The hansard server's base URL for `ctx` (no trailing slash): `HANSARD_URL`, config, else the default. */
export function serverUrl(ctx: ResolveContext): string {
  return (readCaptureConfig(ctx.env, stateDir(ctx.env)).url ?? DEFAULT_URL).replace(/\/+$/, '');
}

/**
 * Resolves the session of one tool call (the order is this module's doc). `sessionToken` is the call's
 * `session_token`. Reads files, and asks the server only for a token whose session nothing else names
 * (once per token with `ctx.boundSessions`).
 * @throws SessionUnresolved saying what to set; ServerError, NetworkError from `GET /v1/tokens/self`
 */
export async function resolveSession(
  sessionToken: string | undefined,
  ctx: ResolveContext,
): Promise<ResolvedSession> {
  const state = stateDir(ctx.env);
  const config = readCaptureConfig(ctx.env, state);
  const url = (config.url ?? DEFAULT_URL).replace(/\/+$/, '');
  const envSid = ctx.env.HANSARD_SESSION_ID || undefined;
  if (envSid !== undefined && !isId('s', envSid)) {
    throw new SessionUnresolved(
      `HANSARD_SESSION_ID=${JSON.stringify(String(envSid).slice(0, 40))} is not a session id (s_ followed by a ULID)`,
    );
  }
  const given = sessionToken || ctx.env.HANSARD_SESSION_TOKEN || undefined;
  const base = { url, cwd: ctx.cwd, cwdFrom: 'mcp server' as const, claudeSessionId: null };
  if (given !== undefined) {
    const source: SessionSource = sessionToken ? 'session_token' : 'HANSARD_SESSION_TOKEN';
    const named = source === 'session_token' ? 'session_token given' : 'HANSARD_SESSION_TOKEN';
    // Its form before any request, and never quoted (the trial of issue 24, item 12).
    const problem = tokenFormProblem(given);
    if (problem) {
      throw new SessionUnresolved(
        `${malformedTokenMessage(`the ${named}`, problem)}: pass the session token exactly as it was given, or leave session_token out (${MAKE_SESSION_TOKEN})`,
      );
    }
    const all = allClaudeSessions(state);
    const hooked = all.find((s) => s.token === given);
    const sid = envSid ?? hooked?.sid ?? (await boundSession(url, given, named, ctx));
    // The hook state of the token's own session says where that session runs (not where this server does).
    const where =
      hooked?.cwd && hooked.sid === sid ? { cwd: hooked.cwd, cwdFrom: 'hook state' as const } : {};
    const hookedHere = all.some((s) => s.sid === sid);
    return { ...base, ...where, sid, token: given, ingestToken: given, source, hookedHere };
  }
  if (envSid !== undefined) {
    if (!config.token) {
      throw new SessionUnresolved(
        'HANSARD_SESSION_ID is set but there is no token: set HANSARD_SESSION_TOKEN (a session token) or HANSARD_TOKEN',
      );
    }
    return {
      ...base,
      sid: envSid,
      token: config.token,
      ingestToken: config.token,
      source: 'HANSARD_SESSION_ID',
      hookedHere: allClaudeSessions(state).some((s) => s.sid === envSid),
    };
  }
  const live = liveClaudeSessions(state, ctx.cwd)[0];
  if (live) {
    const token = live.token ?? config.token;
    if (!token) {
      throw new SessionUnresolved(
        `Claude Code session ${live.claudeSessionId} is hansard session ${live.sid}, but it has no session token yet and no server token is configured: run \`hansard integrations sync\` (or set HANSARD_TOKEN), then start a new Claude Code session`,
      );
    }
    return {
      url,
      sid: live.sid,
      token,
      ingestToken: config.token ?? token,
      source: 'claude-code hook state',
      cwd: live.cwd,
      cwdFrom: 'hook state',
      claudeSessionId: live.claudeSessionId,
      hookedHere: true,
    };
  }
  throw new SessionUnresolved(
    'no hansard session for this MCP server: pass session_token, or set HANSARD_SESSION_TOKEN ' +
      `(a session token: it names its session; ${MAKE_SESSION_TOKEN}) in its environment, ` +
      `or run it in a Claude Code session that hansard captures (\`hansard integrations sync\`) in this directory (${ctx.cwd}); ` +
      `no live captured session there in ${join(state, 'claude-code')}`,
  );
}

/**
 * The session `token` is bound to, as the server at `url` says (`GET /v1/tokens/self`), through
 * `ctx.boundSessions`. `named` says which token it is, for the error.
 * @throws SessionUnresolved for a token bound to no session, or a server without the route (404);
 *   ServerError (401 for a token it does not accept), NetworkError
 */
async function boundSession(url: string, token: string, named: string, ctx: ResolveContext): Promise<string> {
  const key = `${url}\n${token}`;
  let asked = ctx.boundSessions?.get(key);
  if (!asked) {
    const client = new ApiClient({ url, token, retries: 2, minTimeoutMs: 200 });
    asked = fetchTokenSelf(client).then((t) => t.session);
    ctx.boundSessions?.set(key, asked);
    // Only an answer is kept: a failure (the server down, a 5xx) is asked again at the next call.
    asked.catch(() => ctx.boundSessions?.delete(key));
  }
  let sid: string | null;
  try {
    sid = await asked;
  } catch (err) {
    if (err instanceof ServerError && err.status === 404) {
      throw new SessionUnresolved(
        `the hansard server at ${url} cannot say which session the ${named} is bound to (it has no GET /v1/tokens/self: an older version): ` +
          'set HANSARD_SESSION_ID=s_… in the MCP server’s environment beside it',
      );
    }
    throw err;
  }
  if (sid === null || !isId('s', sid)) {
    throw new SessionUnresolved(
      `the ${named} is bound to no session (a token for the whole tenant): ` +
        `set HANSARD_SESSION_ID=s_… in the MCP server’s environment beside it, or use a session token (${MAKE_SESSION_TOKEN})`,
    );
  }
  return sid;
}

/** Every Claude Code session of the hook state with a usable token, wherever it runs. */
function allClaudeSessions(state: string): { sid: string; token: string | null; cwd: string | null }[] {
  const dir = join(state, 'claude-code');
  try {
    return readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .map((n) => readJson(join(dir, n)) as Partial<ClaudeState> | null)
      .filter((s): s is ClaudeState => !!s && typeof s.sid === 'string' && isId('s', s.sid))
      .map((s) => ({
        sid: s.sid,
        token: s.token?.token ?? null,
        cwd: typeof s.cwd === 'string' ? s.cwd : null,
      }));
  } catch {
    return [];
  }
}
