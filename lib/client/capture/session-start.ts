/**
 * What a Claude Code `SessionStart` hook answers (issue 11, seed 000): the hansard session identity and a
 * short project context as `additionalContext`, and a session-bound token for the agent's status reports
 * (`POST /v1/sessions/{sid}/tokens`, scope `report`), minted once per session and reused while it is
 * valid. No server configured, or none answering within the budget: the context says so and capture goes
 * on (the spool ships later); the token is tried again at the next SessionStart.
 */
import { basename, join } from 'node:path';
import { readRegularFile } from '../api/safe-fs.js';
import type { ClaudeState } from './claude-code.js';
import { shellLine } from './shell-line.js';
import { type CaptureConfig, tokenRefusalMessage } from './state-dir.js';

/** Claude Code's hook JSON output for SessionStart. */
export interface SessionStartOutput {
  hookSpecificOutput: { hookEventName: 'SessionStart'; additionalContext: string };
}

/** A minted token as the state keeps it. */
export type MintedToken = NonNullable<ClaudeState['token']>;

/** A token still valid for at least this long is reused rather than minted again. */
const REUSE_MARGIN_MS = 60 * 60 * 1000;

/** The state's token when it is still good for an hour, else null. */
export function reusableToken(st: ClaudeState, now = Date.now()): MintedToken | null {
  const t = st.token;
  if (!t) return null;
  const exp = Date.parse(t.expires_at);
  return Number.isFinite(exp) && exp - now > REUSE_MARGIN_MS ? t : null;
}

/**
 * Mints a session-bound `report` token for `sid`, giving up after `timeoutMs` (ms; a fraction is rounded
 * down, anything under 1 is 1: `wholeMs`). Returns the token, or a
 * sentence saying why there is none (never throws): a server that answered is a refusal naming its URL
 * and status (`tokenRefusalMessage`: recorded as `server_refused`, `hansard doctor` says what to do);
 * one that did not, unreachable or too slow.
 */
export async function mintSessionToken(
  config: CaptureConfig,
  sid: string,
  timeoutMs: number,
): Promise<MintedToken | string> {
  if (!config.token) return 'no server is configured (run `hansard integrations sync`)';
  const url = (config.url ?? 'http://127.0.0.1:8787').replace(/\/+$/, '');
  // AbortSignal.timeout takes a whole number of ms (a fraction throws RangeError, issue 25): the budget
  // left is a fraction of performance.now()'s clock.
  const signal = AbortSignal.timeout(wholeMs(timeoutMs));
  try {
    const res = await fetch(`${url}/v1/sessions/${sid}/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${config.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ scopes: ['report'] }),
      signal,
    });
    const body = (await res.json().catch(() => null)) as {
      token?: string;
      id?: string;
      expires_at?: string;
      error?: { code?: string; message?: string };
    } | null;
    // An answer cut by the timeout is no answer (not a refusal with the status it began with).
    if (body === null && signal.aborted) return `the server at ${url} did not answer in time`;
    if (res.status === 201 && body?.token && body.id && body.expires_at)
      return { token: body.token, id: body.id, expires_at: body.expires_at };
    const code =
      typeof body?.error?.code === 'string' && /^[a-z_]+$/.test(body.error.code) ? body.error.code : null;
    return tokenRefusalMessage(url, res.status, code);
  } catch {
    // The signal says whether the time ran out; an error's kind can be anything fetch wraps.
    return signal.aborted
      ? `the server at ${url} did not answer in time`
      : `the server at ${url} is unreachable`;
  }
}

/**
 * `ms` as AbortSignal.timeout and setTimeout take it: a whole number from 1 to 2^31 - 1 (a fraction, 0, a
 * negative or NaN would throw or fire at once). Rounded down: never later than the budget asked.
 */
export function wholeMs(ms: number): number {
  return Number.isFinite(ms) ? Math.min(2 ** 31 - 1, Math.max(1, Math.floor(ms))) : 1;
}

/**
 * The git branch of `cwd` from `.git/HEAD` (no git process: the hook must stay cheap), or null. A HEAD
 * that is not a regular file (a FIFO, a link to /dev/zero) is not read: it would block the hook or grow
 * without end (issue 25 item 1).
 */
function gitBranch(cwd: string): string | null {
  try {
    const head = readRegularFile(join(cwd, '.git', 'HEAD'), 64 * 1024)
      .toString('utf8')
      .trim();
    const m = /^ref: refs\/heads\/(.+)$/.exec(head);
    return m ? m[1]! : `detached at ${head.slice(0, 12)}`;
  } catch {
    return null;
  }
}

/** The server hansard's commands reach when neither --url nor HANSARD_URL says another. */
const DEFAULT_SERVER = 'http://127.0.0.1:8787';

/**
 * The SessionStart answer. `token`: the minted token, or why there is none; `declaredEvents`: the seed 000
 * switch (`HANSARD_DECLARED_EVENTS=1`) that asks for declared events in reports. `command`: the program
 * and script that run hansard, the same the hooks run (`[absolute node, absolute bin/hansard]`, as
 * `integrations sync` writes them): the report line names them, since `hansard` itself is usually not on
 * the agent's PATH (no `npm link`); null: plain `hansard`. `url`: the server the hooks ship to, named with
 * `--url` when it is not the default, so the line runs as it is, copied and pasted.
 */
export function sessionStartOutput(f: {
  sid: string | null;
  cwd: string | null;
  token: MintedToken | string | null;
  shipping: string;
  declaredEvents: boolean;
  command?: string[] | null;
  url?: string | null;
  /**
   * false: nothing here is known to record the session (the MCP server's `session_context` for a session
   * known only from a token): the first line says only that this is the session (default true: the hook)
   */
  recorded?: boolean;
}): SessionStartOutput {
  const lines: string[] = [];
  if (f.sid === null) {
    lines.push(`hansard is not recording this session: ${f.shipping}.`);
  } else {
    lines.push(
      f.recorded === false
        ? `This is hansard session ${f.sid} (${f.shipping}); no hansard hook on this machine is known to record it.`
        : `hansard is recording this session as ${f.sid} (${f.shipping}).`,
    );
    if (f.cwd) {
      const branch = gitBranch(f.cwd);
      lines.push(`Project: ${basename(f.cwd)} (${f.cwd})${branch ? `, git branch ${branch}` : ''}.`);
    }
    const tokenArg = typeof f.token === 'object' && f.token ? ` --session-token ${f.token.token}` : '';
    const hansard = f.command?.length ? shellLine(f.command) : 'hansard';
    const url = f.url?.replace(/\/+$/, '');
    const urlArg = url && url !== DEFAULT_SERVER ? ` --url ${shellLine([url])}` : '';
    lines.push(
      `Report progress with: ${hansard} session report --session ${f.sid}${tokenArg}${urlArg} --state working|blocked|needs_review|done --note "<one line>".`,
    );
    if (typeof f.token === 'string') lines.push(`No session token: ${f.token}.`);
    if (f.declaredEvents) {
      lines.push(
        'With each report, declare what you did with --events: a JSON array of at most 4 events, kinds plan, decision, assumption, evidence, blocked, lesson; evidence items (at most 4 per event) are {"type":"command"|"test"|"commit"|"file","ref":"<tool-call id, name, commit hash or relative path, at most 160 characters, no arguments or output>","result":"passed"|"failed"|"completed"|"interrupted"|"cancelled"|"present"|"created"|"modified"|"deleted"|"exit:N"}. Example: --events \'[{"kind":"evidence","evidence":[{"type":"test","ref":"parser-unit-tests","result":"passed"}]}]\'. Reports are declarations, not proof: claims are checked against the recorded results.',
      );
    }
  }
  return { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: lines.join('\n') } };
}
