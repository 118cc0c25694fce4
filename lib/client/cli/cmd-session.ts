/** `hansard session report --state S --note N` (seed 000, docs/spec): an agent's status report. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { type Command, Option } from 'commander';
import { MAX_NOTE_CHARS, MAX_REF_CHARS, STATES, StatusReport } from '../../contract/status.js';
import { isId } from '../../log/format/ids.js';
import { clientFrom, retryNotice } from '../api/config.js';
import { UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { jsonOption } from './options.js';

/** An `Io` that may carry the stdin `--events-file -` reads (tests pass their own; the CLI reads process.stdin). */
export type IoWithStdin = Io & { stdin?: Readable };

export function registerSession(program: Command, io: IoWithStdin): void {
  const session = program.command('session').description('report on a session');
  session
    .command('report')
    .description('post a status report: what the agent says it is doing (a declaration, not proof)')
    .addOption(new Option('--state <state>', 'the state').choices([...STATES]).makeOptionMandatory())
    .option('--note <text>', 'one line, at most 240 characters', '')
    .option(
      '--events <json>',
      'declared events, a JSON array of at most 4: [{"kind":"evidence","evidence":[{"type":"test","ref":"npm test","result":"passed"}]}]; kinds plan, decision, assumption, evidence, blocked, lesson',
    )
    .option('--events-file <path>', 'the --events array read from a file (- for stdin)')
    .addOption(new Option('--session <sid>', 'the session id').env('HANSARD_SESSION_ID'))
    .addOption(
      new Option('--session-token <token>', 'a session-bound token (instead of HANSARD_TOKEN)').env(
        'HANSARD_SESSION_TOKEN',
      ),
    )
    .option('--url <url>', 'server URL (env HANSARD_URL)')
    .option('--token <token>', 'token with the report scope (env HANSARD_TOKEN)')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Limits (docs/status.md "Sending a report"): a note of at most 240 characters on one line; at most 4 events, each with at most 4
evidence items; an evidence ref of at most 160 characters (a tool-call id, name, commit hash or relative
path: no arguments or output). A report breaking one is refused with exit code 2 and nothing is sent.

Examples:
  hansard session report --session s_… --state working --note "Checking the implementation"
  hansard session report --session s_… --state done --events-file events.json
  echo '[{"kind":"plan"}]' | hansard session report --session s_… --state working --events-file -`,
    )
    .action((o: SessionReportOptions) => reportSession(o, io));
}

/**
 * The declared events of `--events` or `--events-file` (`-` reads stdin), parsed as JSON; `[]` when
 * neither is given. @throws UsageError for both at once, an unreadable file, or text that is not JSON
 */
async function readEvents(o: { events?: string; eventsFile?: string }, io: IoWithStdin): Promise<unknown> {
  if (o.events !== undefined && o.eventsFile !== undefined) {
    throw new UsageError('give the events once: --events or --events-file, not both');
  }
  let text: string;
  let from: string;
  if (o.events !== undefined) {
    text = o.events;
    from = '--events';
  } else if (o.eventsFile !== undefined) {
    from = o.eventsFile === '-' ? '--events-file - (stdin)' : `--events-file ${o.eventsFile}`;
    text = o.eventsFile === '-' ? await readAll(io.stdin ?? process.stdin) : readFileText(o.eventsFile, io);
  } else {
    return [];
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(
      `${from} is not valid JSON (${(err as Error).message}): give an array such as [{"kind":"plan"}]`,
    );
  }
}

function readFileText(path: string, io: Io): string {
  try {
    return readFileSync(resolve(io.cwd, path), 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a directory' : (code ?? 'unreadable');
    throw new UsageError(`--events-file ${path}: cannot read it (${why})`);
  }
}

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
  return Buffer.concat(chunks).toString('utf8');
}

/** The seed's limits (seed 000 "Declare events and evidence"), as a refusal states them. */
const LIMITS_TEXT =
  `limits: a note of at most ${MAX_NOTE_CHARS} characters on one line; at most 4 events, each with at most 4 evidence items; ` +
  `a ref of at most ${MAX_REF_CHARS} characters, one line, a tool-call id, name, commit hash or relative path`;

/**
 * The report checked against the API's own schema before it is sent, so the limits are the server's
 * (note ≤ 240, ≤ 4 events × ≤ 4 evidence, ref ≤ 160) and a refusal names each problem with its path.
 * @throws UsageError listing the problems (exit code 2; nothing is sent)
 */
function checkReport(input: { state: string; note: string; events: unknown }): StatusReport {
  const parsed = StatusReport.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues
    .slice(0, 10)
    .map((i) => `  - ${i.path.length > 0 ? `${flagPath(i.path)}: ` : ''}${i.message}`);
  throw new UsageError(
    `the status report breaks the limits; nothing was sent:\n${problems.join('\n')}\n${LIMITS_TEXT}`,
  );
}

/** `events.0.evidence.1.ref` → `events[0].evidence[1].ref`; the note as its flag. */
function flagPath(path: PropertyKey[]): string {
  if (path.length === 1 && path[0] === 'note') return '--note';
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join('');
}

/** The options of `hansard session report`, as commander parses them. */
export interface SessionReportOptions {
  state: string;
  note: string;
  events?: string;
  eventsFile?: string;
  session?: string;
  sessionToken?: string;
  url?: string;
  token?: string;
  json?: boolean;
}

/**
 * `hansard session report`: checks the report against the limits (docs/status.md) before anything is
 * sent, posts it to the session's status, and prints what was reported.
 * @throws UsageError without a session id, for one that is not `s_<ULID>`, or a report over the limits
 */
export async function reportSession(o: SessionReportOptions, io: IoWithStdin): Promise<void> {
  if (!o.session) throw new UsageError('which session? pass --session s_… or set HANSARD_SESSION_ID');
  if (!isId('s', o.session))
    throw new UsageError(`--session ${o.session} is not a session id (s_ followed by a ULID)`);
  const events = await readEvents(o, io);
  const report = checkReport({ state: o.state, note: o.note, events });
  const client = clientFrom({ url: o.url, token: o.sessionToken ?? o.token }, io.env, retryNotice(io));
  const res = await client.request('POST', `/v1/sessions/${o.session}/status`, {
    body: JSON.stringify(report),
    contentType: 'application/json',
  });
  if (o.json) return printJson(io, res.body);
  io.stdout.write(`reported ${o.state} for ${o.session}\n`);
  // A report may come before the segments, but a mistyped id also looks like this: say so.
  if ((res.body as { writers?: number }).writers === 0) {
    io.stderr.write(
      `note: the server has no segments of ${o.session} yet. If you expected some, check the session id ` +
        '(hansard upload prints it; the board lists it under "no segments yet").\n',
    );
  }
}
