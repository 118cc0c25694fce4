/**
 * `hansard run HARNESS [hcn flags] -- PROMPT…` (seed 002, DESIGN §6, docs/import.md "hcn"): runs
 * `hcn run HARNESS --json [hcn flags] --prompt "PROMPT…"` and records its NDJSON as a session while
 * passing hcn's stdout through byte for byte (stderr too), forwarding SIGINT/SIGTERM/SIGHUP to hcn, and exiting
 * with hcn's exit code. hcn is `--hcn PATH`, else `hcn` on PATH. Recording never stops the run: a failure
 * to write is reported once on stderr and the passthrough goes on.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, readFileSync, rmSync, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { HcnRecorder, type HcnRecordResult } from '../../importers/hcn.js';
import { ExitError, UsageError } from '../api/errors.js';
import { type IoWithStdin, type RecordFlags, recordOptions, summary, upload } from './cmd-hcn.js';

const INSTALL_HINT =
  'install hcn (harness-cli-normalizer, https://github.com/dungle-scrubs/harness-cli-normalizer) so `hcn` is on PATH, or pass --hcn /path/to/hcn';

/** `hansard run`: registered on the program. */
export function registerRun(program: Command, io: IoWithStdin): void {
  recordOptions(
    program
      .command('run')
      .description(
        'run a harness through hcn (hcn run --json) and record it as a session; hcn output passes through',
      )
      .argument('<harness>', 'the harness hcn runs (claude, codex, pi, …)')
      .argument('[args...]', 'hcn run flags, then -- and the prompt')
      .option('--hcn <path>', 'the hcn executable (default: hcn on PATH)'),
  )
    .allowUnknownOption()
    .allowExcessArguments()
    .addHelpText(
      'after',
      '\nExample: hansard run claude --model opus -- fix the failing test\n' +
        'The words after -- are the prompt (passed as --prompt); --prompt/--prompt-file among the hcn flags work too.\n' +
        "hansard's own options (--hcn, --out, --user, --upload, --url, --token) go before --. Exit code: hcn's.",
    )
    .action((harness: string, args: string[], o: RunOptions, cmd: Command) =>
      run(harness, args, o, (cmd.parent as { rawArgs?: string[] } | null)?.rawArgs ?? [], io),
    );
}

/**
 * The hcn flags and the prompt words: everything after the first `--` that follows `run` in the raw argv
 * (commander drops or keeps that `--` depending on what came before it, so the raw argv decides).
 */
export function splitPrompt(raw: string[], args: string[]): { flags: string[]; promptWords: string[] } {
  const at = raw.indexOf('--', Math.max(0, raw.indexOf('run')));
  const promptWords = at < 0 ? [] : raw.slice(at + 1);
  const flags = args.slice(0, args.length - promptWords.length);
  if (flags[flags.length - 1] === '--') flags.pop();
  return { flags, promptWords };
}

/** The prompt text for the record when given as `--prompt X` or `--prompt-file FILE` (not `-`), else null. */
function promptFromFlags(flags: string[], cwd: string): string | null {
  for (let i = 0; i < flags.length; i++) {
    const [name, inline] = flags[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = inline ?? flags[i + 1];
    if (value === undefined) continue;
    if (name === '--prompt') return value;
    if (name === '--prompt-file' && value !== '-') {
      try {
        return readFileSync(resolve(cwd, value), 'utf8');
      } catch {
        return null; // hcn reports the unreadable file itself
      }
    }
  }
  return null;
}

/** The hcn executable: `--hcn PATH` (checked), else the first `hcn` on PATH. @throws UsageError */
export function findHcn(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  if (flag !== undefined) {
    const p = isAbsolute(flag) ? flag : resolve(cwd, flag);
    if (!isExecutable(p)) throw new UsageError(`--hcn ${flag} is not an executable file; ${INSTALL_HINT}`);
    return p;
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const p = join(dir, 'hcn');
    if (isExecutable(p)) return p;
  }
  throw new UsageError(`hcn was not found on PATH: ${INSTALL_HINT}`);
}

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * Runs hcn, passing its output through and recording its stdout; resolves with the exit code hansard
 * exits with (hcn's, or 128 + the signal number when a signal ended it).
 */
async function runHcn(
  io: IoWithStdin,
  hcn: string,
  argv: string[],
  f: { harness: string; prompt: string | null; o: RecordFlags },
): Promise<number> {
  const recorder = new HcnRecorder({
    outDir: resolve(io.cwd, f.o.out),
    app: 'hansard run',
    agent: f.harness,
    harness: f.harness, // named in the usage notes (issue 27)
    prompt: f.prompt,
    userId: f.o.user,
    // Flag names only: values (`--env K=V`, `--prompt`) may hold secrets, and `meta` is not redacted.
    meta: { hcn_flags: argv.filter((a) => a.startsWith('--')).map((a) => a.split('=')[0]) },
  });
  let failed = false;
  const record = (fn: () => void): void => {
    if (failed) return;
    try {
      fn();
    } catch (err) {
      failed = true;
      recorder.abort();
      io.stderr.write(
        `hansard: recording stopped (hcn's output still passes through): ${(err as Error).message}\n`,
      );
    }
  };
  record(() => recorder.start());
  // hcn reads stdin only for `--prompt-file -`; otherwise it gets none, so a terminal stays ours. It runs
  // in its own process group so a terminal's Ctrl-C reaches it once, through us, not twice (hcn may take a
  // second SIGINT as "force"); with stdin inherited it stays in ours, as a background group cannot read a tty.
  const stdinInherited = argv.includes('-');
  const child: ChildProcess = spawn(hcn, argv, {
    cwd: io.cwd,
    env: io.env,
    stdio: [stdinInherited ? 'inherit' : 'ignore', 'pipe', 'pipe'],
    detached: !stdinInherited,
  });
  const forwards = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((sig) => {
    const fn = () => child.kill(sig);
    process.on(sig, fn);
    return () => process.off(sig, fn);
  });
  try {
    const exit = new Promise<number>((done, fail) => {
      child.on('error', (err: NodeJS.ErrnoException) =>
        fail(new UsageError(`cannot run ${hcn}: ${err.code ?? err.message}; ${INSTALL_HINT}`)),
      );
      child.on('close', (code, signal) =>
        done(code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : 1)),
      );
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      // Byte for byte first: the caller reads hcn's stream; the record is ours.
      if (io.stdout.write(chunk) === false && io.stdout.once) {
        child.stdout!.pause();
        io.stdout.once('drain', () => child.stdout!.resume());
      }
      record(() => recorder.push(chunk));
    });
    child.stderr!.on('data', (chunk: Buffer) =>
      (io.stderr.write as (s: string | Uint8Array) => unknown)(chunk),
    );
    let code: number;
    try {
      code = await exit;
    } catch (err) {
      // hcn never started: nothing of the run to keep.
      recorder.abort();
      if (recorder.writer) rmSync(recorder.writer.dir, { recursive: true, force: true });
      throw err;
    }
    let result: HcnRecordResult | null = null;
    record(() => {
      result = recorder.finish();
    });
    if (result !== null) {
      const r: HcnRecordResult = result;
      io.stderr.write(`hansard: recorded ${r.dir}: ${summary(r)}\n`);
      if (f.o.upload) {
        try {
          const u = await upload(io, r.dir, f.o);
          io.stderr.write(`hansard: uploaded ${u.sid} (${u.sent_lines} lines)\n`);
        } catch (err) {
          io.stderr.write(
            `hansard: upload failed (the session stays in ${r.dir}): ${(err as Error).message}\n`,
          );
        }
      }
    }
    return code;
  } finally {
    for (const off of forwards) off();
  }
}

/** The options of `hansard run`, as commander parses them. */
export interface RunOptions extends RecordFlags {
  hcn?: string;
}

/**
 * `hansard run <harness> [hcn flags] -- <prompt>`: runs hcn with the harness and the prompt (the words
 * after `--`, or `--prompt`/`--prompt-file` among the flags) and records what it observes as a session.
 * @param rawArgs the command line as commander read it, where the flags for hcn and the prompt are found
 * @throws UsageError when no prompt is given
 * @throws ExitError with hcn's exit code when it is not 0
 */
export async function run(
  harness: string,
  args: string[],
  o: RunOptions,
  rawArgs: string[],
  io: IoWithStdin,
): Promise<void> {
  const { flags, promptWords } = splitPrompt(rawArgs, args);
  const hasPromptFlag = flags.some((f) => /^--prompt(-file)?(=|$)/.test(f));
  if (promptWords.length === 0 && !hasPromptFlag)
    throw new UsageError('no prompt: put it after --, as in: hansard run claude -- fix the failing test');
  const hcn = findHcn(o.hcn, io.env, io.cwd);
  const argv = [
    'run',
    harness,
    '--json',
    ...flags.filter((f) => f !== '--json'),
    ...(promptWords.length ? ['--prompt', promptWords.join(' ')] : []),
  ];
  const code = await runHcn(io, hcn, argv, {
    harness,
    prompt: promptWords.length ? promptWords.join(' ') : promptFromFlags(flags, io.cwd),
    o,
  });
  if (code !== 0) throw new ExitError(code);
}
