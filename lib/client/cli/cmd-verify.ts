/**
 * `hansard verify SID|DIR [--json]` and `hansard inspect SID|DIR [--json]` (issue 3, DESIGN §6).
 * verify exits 1 when any problem has severity `error`.
 */

import { basename } from 'node:path';
import type { Command } from 'commander';
import { AUDIT_FINDING_CODES, type AuditFindingCode } from '../../audit/schemas.js';
import { formatSummary, inspectSession, type SessionSummary } from '../../log/analyse/inspect.js';
import { type VerifyReport, verifySegments } from '../../log/analyse/verify.js';
import { VERIFY_CODE_INFO } from '../../log/analyse/verify-codes.js';
import { escapeControl } from '../../log/format/escape.js';
import { isId } from '../../log/format/ids.js';
import { segmentSources, sessionDirSegments } from '../../log/replay/replay.js';
import { clientFrom, retryNotice } from '../api/config.js';
import { ExitError, UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { VERIFY_DIGESTS_HELP, verifyDigests } from './cmd-verify-digests.js';
import { jsonOption } from './options.js';
import { sessionTarget } from './session-target.js';

/** The bundle codes of `verify --digests` as `{severity, meaning}`, from AUDIT_FINDING_CODES. */
export const BUNDLE_CODE_INFO = Object.fromEntries(
  Object.entries(AUDIT_FINDING_CODES).map(([code, text]) => {
    const i = text.indexOf(': ');
    return [code, { severity: text.slice(0, i), meaning: text.slice(i + 2) }];
  }),
) as Record<AuditFindingCode, { severity: 'error' | 'warning'; meaning: string }>;

/**
 * `hansard verify --codes`: every code a user can see, in two sections: a session's log (the table of
 * docs/verify.md) and an export bundle's (`--digests`, docs/audit.md's findings), both from the code
 * that reports them. `--json`: `{log: {code: {severity, meaning}}, bundle: {…}}`.
 */
function printCodes(io: Io, json: boolean): void {
  if (json) {
    printJson(io, { log: VERIFY_CODE_INFO, bundle: BUNDLE_CODE_INFO });
    return;
  }
  const sections: Array<[string, Record<string, { severity: string; meaning: string }>]> = [
    ['A session log (hansard verify SID|DIR):', VERIFY_CODE_INFO],
    ['An export bundle (hansard verify --digests BUNDLE):', BUNDLE_CODE_INFO],
  ];
  for (const [i, [title, codes]] of sections.entries()) {
    io.stdout.write(`${i > 0 ? '\n' : ''}${title}\n`);
    for (const [code, { severity, meaning }] of Object.entries(codes)) {
      io.stdout.write(
        `${severity.padEnd(7)}  ${code.padEnd(26)}  ${meaning.replaceAll('`', '').replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')}\n`,
      );
    }
  }
}

export function registerVerify(program: Command, io: Io): void {
  program
    .command('verify')
    .description('check a session against the log format; exit 1 when any problem is an error')
    .argument('[session]', 'a session directory, or a session id (s_…) to check on the server')
    .option('--url <url>', 'server URL (env HANSARD_URL)')
    .option('--token <token>', 'token with the read scope (env HANSARD_TOKEN)')
    .option('--codes', 'list every problem code, its severity and what it means, and exit')
    .option('--digests <bundle>', 'check an export bundle (.tar, .tar.gz or directory) offline instead')
    .option(
      '--public-key <key>',
      'with --digests: a key to trust (PEM, GET /v1/keys JSON, or one key JSON); repeatable',
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option(
      '--at <iso>',
      'with --digests: check the digest cadence as of this time (default: the export time)',
    )
    .option(
      '--max-bytes <n>',
      'with --digests: extract at most this much from a .tar/.tar.gz (e.g. 200GiB; env HANSARD_VERIFY_MAX_BYTES; default 100× a .tar.gz, at most 64GiB)',
    )
    .option(
      '--sid <sid>',
      'with --digests and --tenant: the session the bundle must be of (else an error, exit 1); sids are unique only within a tenant',
    )
    .option('--tenant <tenant>', 'with --digests: the tenant the bundle must be of (else an error, exit 1)')
    .option('--max-entries <n>', 'with --digests: extract at most this many tar entries (default 1000000)')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      '\nEach problem is: severity, code, writer, seq/line, message. Severities: error (the session is not\n' +
        `ok; exit 1), warning, info. What each code means: hansard verify --codes\n${VERIFY_DIGESTS_HELP}`,
    )
    .action((target: string | undefined, o: VerifyOptions) => verify(target, o, io));

  program
    .command('inspect')
    .description(
      'summarize a session: writers, participants, turns, actions by tool, corrections, verify summary',
    )
    .argument('<session>', 'a session directory, or a session id (s_…) on the server')
    .option('--url <url>', 'server URL (env HANSARD_URL)')
    .option('--token <token>', 'token with the read scope (env HANSARD_TOKEN)')
    .addOption(jsonOption())
    .action((target: string, o: InspectOptions) => inspect(target, o, io));
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The options of `hansard verify`, as commander parses them. */
export interface VerifyOptions {
  url?: string;
  token?: string;
  json?: boolean;
  codes?: boolean;
  digests?: string;
  publicKey?: string[];
  at?: string;
  maxBytes?: string;
  maxEntries?: string;
  sid?: string;
  tenant?: string;
}

/**
 * `hansard verify [target]`: checks a session (a local directory or one on the server) and prints each
 * problem, or with `--digests` checks an exported bundle offline, or with `--codes` lists what each code
 * means.
 * @throws UsageError for a target and `--digests` together, digest options without `--digests`, or no
 * target
 * @throws ExitError 1 when the session is not ok
 */
export async function verify(target: string | undefined, o: VerifyOptions, io: Io): Promise<void> {
  if (o.digests !== undefined) {
    if (target !== undefined) {
      throw new UsageError('--digests checks a bundle: pass the bundle to --digests and no session');
    }
    await verifyDigests(io, o.digests, o);
    return;
  }
  if (
    o.publicKey !== undefined ||
    o.at !== undefined ||
    o.maxBytes !== undefined ||
    o.maxEntries !== undefined ||
    o.sid !== undefined ||
    o.tenant !== undefined
  ) {
    throw new UsageError(
      '--public-key, --at, --sid, --tenant, --max-bytes and --max-entries go with --digests BUNDLE',
    );
  }
  if (o.codes) {
    printCodes(io, o.json === true);
    return;
  }
  if (target === undefined) {
    throw new UsageError(
      'which session? pass a session directory or a session id (s_…); --codes lists the codes',
    );
  }
  const t = sessionTarget(target, io.cwd);
  let report: VerifyReport;
  if (t.kind === 'dir') {
    const segments = sessionDirSegments(t.dir);
    if (segments.length === 0) throw new UsageError(`${target} holds no w_<ULID>.jsonl segments`);
    const name = basename(t.dir);
    report = await verifySegments(segments, isId('s', name) ? name : undefined);
  } else {
    report = (await clientFrom(o, io.env, retryNotice(io)).request('GET', `/v1/sessions/${t.sid}/verify`))
      .body as VerifyReport;
  }
  if (o.json) printJson(io, report);
  else {
    for (const p of report.problems) {
      const where = `${p.w}${p.seq !== null ? ` seq ${p.seq}` : ''}${p.line !== null ? ` line ${p.line}` : ''}`;
      // A report from an older server may quote events' ids raw: never let one reach the terminal.
      const line = `${p.severity.padEnd(7)}  ${p.code.padEnd(26)}  ${where}: ${p.message}`;
      io.stdout.write(`${escapeControl(line)}\n`);
    }
    const s = report.summary;
    io.stdout.write(
      `${report.ok ? 'ok' : 'NOT ok'}: ${plural(s.events, 'event')} in ${plural(s.writers, 'writer')}; ${plural(s.errors, 'error')}, ${plural(s.warnings, 'warning')}, ${s.infos} info\n`,
    );
  }
  if (!report.ok) throw new ExitError(1);
}

/** The options of `hansard inspect`, as commander parses them. */
export interface InspectOptions {
  url?: string;
  token?: string;
  json?: boolean;
}

/**
 * `hansard inspect <target>`: a session's summary (writers, turns, actions, what verify found), from a
 * local directory or the server, as text or JSON.
 * @throws UsageError for a directory without segments
 */
export async function inspect(target: string, o: InspectOptions, io: Io): Promise<void> {
  const t = sessionTarget(target, io.cwd);
  let summary: SessionSummary;
  if (t.kind === 'dir') {
    const segments = sessionDirSegments(t.dir);
    if (segments.length === 0) throw new UsageError(`${target} holds no w_<ULID>.jsonl segments`);
    const name = basename(t.dir);
    const report = await verifySegments(segments, isId('s', name) ? name : undefined);
    summary = await inspectSession(segmentSources(segments), report);
  } else {
    summary = (await clientFrom(o, io.env, retryNotice(io)).request('GET', `/v1/sessions/${t.sid}/inspect`))
      .body as SessionSummary;
  }
  if (o.json) printJson(io, summary);
  else io.stdout.write(formatSummary(summary));
}
