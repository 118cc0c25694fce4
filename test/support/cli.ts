/**
 * The `hansard` command run in this process (`runCli`), its output captured: what the CLI suites assert
 * on. `env` replaces the process environment for the command (HANSARD_URL, HANSARD_TOKEN, …).
 */
import { runCli } from '../../lib/client/cli/main.js';

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

export async function runHansard(
  args: string[],
  opts: { cwd: string; env?: Record<string, string | undefined> },
): Promise<CliRun> {
  let out = '';
  let err = '';
  const io = {
    stdout: {
      write: (s: string | Uint8Array) => (out += typeof s === 'string' ? s : Buffer.from(s).toString()),
    },
    stderr: { write: (s: string) => (err += s) },
    env: opts.env ?? {},
    cwd: opts.cwd,
  };
  const code = await runCli(args, io);
  return { code, out, err };
}
