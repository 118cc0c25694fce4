/**
 * The `hansard` command (DESIGN §6), built with commander. Commands are plain functions in this folder;
 * this file only parses arguments, prints, and maps errors to exit codes (0 ok, 1 failure, 2 usage or
 * refusal).
 */
import { Command, CommanderError } from 'commander';
import { escapeControl } from '../../log/format/escape.js';
import { HANSARD_VERSION } from '../../version.js';
import { NetworkError, ServerError, STORAGE_FAULTS_FOR_OPERATOR } from '../api/client.js';
import { ExitError, FailureError, UsageError } from '../api/errors.js';
import type { Io } from '../api/io.js';
import { registerAlerts } from './cmd-alerts.js';
import { registerAuditLog } from './cmd-audit-log.js';
import { registerDoctor } from './cmd-doctor.js';
import { registerExport } from './cmd-export.js';
import { registerObserve } from './cmd-hcn.js';
import { registerHook } from './cmd-hook.js';
import { registerImport } from './cmd-import.js';
import { registerIntegrations } from './cmd-integrations.js';
import { registerKeys } from './cmd-keys.js';
import { registerMcp } from './cmd-mcp.js';
import { registerPeople } from './cmd-people.js';
import { registerReplay } from './cmd-replay.js';
import { registerRun } from './cmd-run.js';
import { registerSearch } from './cmd-search.js';
import { registerServe } from './cmd-serve.js';
import { registerSession } from './cmd-session.js';
import { registerTenant } from './cmd-tenant.js';
import { registerToken } from './cmd-token.js';
import { registerUpload } from './cmd-upload.js';
import { registerUsage } from './cmd-usage.js';
import { registerVerify } from './cmd-verify.js';
import { registerWork } from './cmd-work.js';

/** Builds the program; `io` carries the streams and environment (tests pass their own). */
export function buildProgram(io: Io): Command {
  const program = new Command('hansard')
    .description(
      'hansard keeps the record of work by people and AI coding agents: append-only session segments, merged replay, status reports and a team status board.',
    )
    .version(HANSARD_VERSION, '-V, --version')
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `
Getting started:
  hansard serve                               run the local service and board (http://127.0.0.1:8787)
  export HANSARD_TOKEN=hns_…                  the admin token serve printed on first start
  hansard import claude-code FILE.jsonl       turn a Claude Code transcript into a session directory
  hansard upload ./sessions/s_…               send a session to the server
  hansard replay s_… --format text            read it back, merged

Environment: HANSARD_URL (default http://127.0.0.1:8787), HANSARD_TOKEN, HANSARD_DATA_DIR.
Exit codes: 0 success, 1 failure (of the server, or of a service it uses such as a sign-in provider),
2 usage error or request refused by the server (4xx).`,
    );
  registerServe(program, io);
  registerToken(program, io);
  registerTenant(program, io);
  registerKeys(program, io);
  registerUpload(program, io);
  registerReplay(program, io);
  registerVerify(program, io);
  registerExport(program, io);
  registerUsage(program, io);
  registerSearch(program, io);
  registerAlerts(program, io);
  registerPeople(program, io);
  registerAuditLog(program, io);
  registerSession(program, io);
  registerImport(program, io);
  registerObserve(program, io);
  registerRun(program, io);
  registerIntegrations(program, io);
  registerHook(program, io);
  registerDoctor(program, io);
  registerMcp(program, io);
  registerWork(program, io);
  return program;
}

/** Runs the CLI with `argv` (without `node` and the script) and returns the exit code. */
export async function runCli(argv: string[], io: Io): Promise<number> {
  const program = buildProgram(io);
  // The flag the running command takes for the server's URL, for the hint of a server not reached.
  let serverFlag: string | null = null;
  program.hook('preAction', (_program, action) => {
    serverFlag = serverFlagOf(action);
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (!argv.includes('--json') || err instanceof CommanderError || err instanceof ExitError) {
      return exitCodeFor(err, io, serverFlag);
    }
    // Asked for machine output: the failure too, as one JSON object on stderr (the same envelope as the
    // API's errors, plus the exit code); the sentence a person would read is its message.
    let text = '';
    const sink = {
      write: (t: string) => {
        text += t;
        return true;
      },
    };
    const code = exitCodeFor(err, { ...io, stderr: sink }, serverFlag);
    io.stderr.write(`${JSON.stringify(jsonError(err, text, code))}\n`);
    return code;
  }
}

/** `{"error":{"code","message","details","exit_code"}}` for a failed command run with `--json`. */
function jsonError(err: unknown, text: string, exitCode: number) {
  const said = text.trim();
  if (err instanceof ServerError) {
    return {
      error: {
        code: err.code,
        message: err.message,
        details: { ...err.details, status: err.status },
        exit_code: exitCode,
      },
    };
  }
  const code =
    err instanceof UsageError
      ? err.code
      : err instanceof NetworkError
        ? 'unreachable'
        : err instanceof FailureError
          ? 'failed'
          : 'internal';
  // Unexpected errors keep their stack out of machine output; the sentence is enough to report it.
  const message =
    code === 'internal' ? String(err instanceof Error ? err.message : err) : said.replace(/^hansard: /, '');
  return { error: { code, message, details: {}, exit_code: exitCode } };
}

/**
 * `--server` or `--url`, whichever of the two `command` takes for the server's URL (`--server` first:
 * `hansard alerts add` takes both, its `--url` being the target's); null when it takes neither.
 */
function serverFlagOf(command: Command): string | null {
  const flags = new Set(command.options.map((o) => o.long));
  return flags.has('--server') ? '--server' : flags.has('--url') ? '--url' : null;
}

function exitCodeFor(err: unknown, io: Io, serverFlag: string | null = null): number {
  if (err instanceof CommanderError) {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0)
      return 0;
    return 2;
  }
  if (err instanceof ExitError) return err.exitCode;
  if (err instanceof UsageError) {
    io.stderr.write(`hansard: ${err.message}\n`);
    return 2;
  }
  if (err instanceof FailureError) {
    io.stderr.write(`hansard: ${err.message}\n`);
    return 1;
  }
  if (err instanceof ServerError && STORAGE_FAULT_CODES.has(err.code)) {
    io.stderr.write(storageFaultText(err));
    return 1;
  }
  if (err instanceof ServerError) {
    // A provider the server had to use (a tenant's OpenID issuer) failed: the server did not refuse.
    const said =
      err.status === 404
        ? 'the server has no such thing'
        : err.code === 'provider_unavailable'
          ? 'the sign-in provider could not be used'
          : 'the server refused';
    io.stderr.write(`hansard: ${said}: ${escapeControl(err.message)} (${err.status} ${err.code})\n`);
    // Validation errors carry one issue per field: show them, they say what to change.
    const issues = Array.isArray(err.details.issues)
      ? (err.details.issues as Array<{ path?: unknown; message?: unknown }>)
      : [];
    for (const i of issues.slice(0, 10)) {
      io.stderr.write(
        `${escapeControl(`  - ${i.path ? `${String(i.path)}: ` : ''}${String(i.message ?? '')}`)}\n`,
      );
    }
    if (err.status === 401) io.stderr.write('hint: check HANSARD_TOKEN / --token\n');
    if (err.status === 404 && err.code === 'not_found') {
      // A session token sees its own session only: another session's routes answer 404, as an unknown id.
      const sessionRoute = err.path?.startsWith('/v1/sessions/') ?? false;
      io.stderr.write(
        err.path?.startsWith('/v1/alerts/')
          ? 'hint: check the target id (at_…): hansard alerts list shows the tenant’s targets\n'
          : err.path?.startsWith('/v1/people/')
            ? 'hint: check the email: hansard people list shows the tenant’s people\n'
            : err.path?.startsWith('/v1/tenants/')
              ? 'hint: hansard tenant oidc set sets the tenant’s sign-in; hansard tenant oidc show shows it\n'
              : `hint: check the id (hansard upload prints the session id; the board lists them)${sessionRoute ? ', or the token is bound to another session (a session token sees its own session only)' : ''}\n`,
      );
    }
    if (err.status === 403 && Array.isArray(err.details.required)) io.stderr.write(scopeHint(err.details));
    return err.status >= 400 && err.status < 500 ? 2 : 1;
  }
  if (err instanceof NetworkError) {
    io.stderr.write(
      `hansard: ${err.message}\nhint: is the server running? Start one with npm start in the hansard checkout ` +
        `(or hansard serve), or point HANSARD_URL${serverFlag ? ` (or ${serverFlag})` : ''} at the server you use\n`,
    );
    return 1;
  }
  io.stderr.write(
    `hansard: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  return 1;
}

/** The server's storage faults (docs/operations.md): its operator's to fix, not the user's request. */
const STORAGE_FAULT_CODES: ReadonlySet<string> = new Set([
  ...STORAGE_FAULTS_FOR_OPERATOR,
  'storage_read_only',
  'insufficient_storage',
]);

/**
 * A storage fault of the server as the user sees it: its code and status, the server's message, the
 * details that locate it (the writer, the byte range, the offset to resume from), and whom to ask.
 */
function storageFaultText(err: ServerError): string {
  const lines = [`hansard: the server's storage failed: ${err.code} (${err.status}): ${err.message}`];
  const d = err.details;
  const range = d.range as { start?: unknown; end?: unknown } | undefined;
  if (typeof d.w === 'string') lines.push(`  writer: ${escapeControl(d.w)}`);
  if (range && typeof range.start === 'number' && typeof range.end === 'number') {
    lines.push(`  bytes: [${range.start}, ${range.end}) of its segment`);
  }
  if (typeof d.expected_offset === 'number') lines.push(`  resume at: byte ${d.expected_offset}`);
  const passing = err.code === 'storage_read_only' || err.code === 'insufficient_storage';
  lines.push(
    `hint: ${passing ? 'it did not pass while this command tried again; run it again later, or' : 'no retry changes this:'} ` +
      `ask the server's operator; see docs/operations.md#${err.code} in the hansard repository`,
  );
  return `${lines.join('\n')}\n`;
}

/** What to do about a token that lacks a scope: which token has it, or how to make one. */
function scopeHint(details: Record<string, unknown>): string {
  // Any one of the required scopes does: name the first (the one the command needs most, e.g. ingest
  // for an upload that first reads what the server has).
  const scope = (details.required as string[])[0];
  const has = Array.isArray(details.has) ? (details.has as string[]) : [];
  const boardOnly = has.length === 1 && has[0] === 'board';
  return (
    (boardOnly
      ? 'hint: this token may only show the board (as the board link printed by hansard serve does). Use the\n' +
        '  admin token printed at the first start, or make one for this: '
      : 'hint: make a token with that scope: ') +
    `hansard token create --scopes ${scope} (run it with an admin token)\n`
  );
}

const isMain = process.argv[1] !== undefined && /(?:^|[\\/])(?:hansard|cli\.js)$/.test(process.argv[1]);
if (isMain) {
  // `hansard replay … | head` closes the pipe early: that is the reader's choice, not a failure.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  const io: Io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
  runCli(process.argv.slice(2), io).then(
    (code) => {
      // `serve` keeps running: only exit for commands that finished.
      if (code !== 0 || !io.keepAlive) process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`hansard: ${String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
