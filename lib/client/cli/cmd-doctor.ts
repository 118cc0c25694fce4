/**
 * `hansard doctor [--project DIR] [--clear-failures] [--json]` (issue 11 item 3, DESIGN §6, seed 000): is capture working
 * here (lib/client/capture/doctor.ts)? One line per check, ✓ or ✗ (! a warning), and under a ✗ or ! the command
 * that fixes it.
 * Exit 0 when all is well, 1 when something needs action.
 */
import type { Command } from 'commander';
import { escapeControl } from '../../log/format/escape.js';
import { ExitError, FailureError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { runDoctor } from '../capture/doctor.js';
import { clearHookFailures, hookFailuresPath, stateDir } from '../capture/state-dir.js';
import { jsonOption } from './options.js';

export function registerDoctor(program: Command, io: Io): void {
  program
    .command('doctor')
    .description(
      "check capture: the server and token the hooks use, the state directory, hansard's hooks in Claude Code and Codex, events not shipped yet, and hook failures of the last 7 days",
    )
    .option(
      '--project <dir>',
      'the project whose .claude/settings.json is checked too (default: this folder)',
    )
    .option(
      '--clear-failures',
      'empty the record of hook failures (<state>/hook-failures.json) first, once their cause is fixed',
    )
    .addOption(jsonOption())
    .addHelpText(
      'after',
      '\nExit 0 when all is well, 1 when something needs action (each ✗ says the command that fixes it; a ! is a warning only).',
    )
    .action((o: DoctorOptions) => doctor(o, io));
}

/** The options of `hansard doctor`, as commander parses them. */
export interface DoctorOptions {
  project?: string;
  json?: boolean;
  clearFailures?: boolean;
}

/**
 * `hansard doctor`: runs the capture checks (lib/client/capture/doctor.ts) and prints one line per check
 * with its fix, or the report as JSON; with `--clear-failures` empties the record of hook failures first.
 * @throws FailureError when that record cannot be written
 * @throws ExitError 1 when something needs action
 */
export async function doctor(o: DoctorOptions, io: Io): Promise<void> {
  if (o.clearFailures) {
    const state = stateDir(io.env);
    const cleared = clearHookFailures(state);
    if (cleared === null) {
      throw new FailureError(`cannot write ${hookFailuresPath(state)}: the record of hook failures is kept`);
    }
    // On stderr: with --json, stdout holds the report only.
    io.stderr.write(
      `hansard: cleared ${cleared} hook failure record${cleared === 1 ? '' : 's'} (${hookFailuresPath(state)})\n`,
    );
  }
  const report = await runDoctor({
    env: io.env,
    cwd: io.cwd,
    ...(o.project ? { project: o.project } : {}),
  });
  if (o.json) {
    printJson(io, report);
  } else {
    for (const f of report.findings) {
      const [first, ...more] = f.message.split('\n');
      const mark = !f.ok ? '✗' : f.warn ? '!' : '✓';
      io.stdout.write(`${mark} ${f.check.padEnd(17)} ${escapeControl(first ?? '')}\n`);
      for (const line of more) io.stdout.write(`  ${escapeControl(line)}\n`);
      if ((!f.ok || f.warn) && f.fix) io.stdout.write(`    fix: ${escapeControl(f.fix)}\n`);
    }
    io.stdout.write(report.ok ? 'all is well\n' : 'something needs action: see the fixes above\n');
  }
  if (!report.ok) throw new ExitError(1);
}
