/**
 * The built `hansard serve` for the ingest benchmarks (bench/load.ts, bench/ingest-scale.ts), like
 * bench/serve.ts but able to run it under a profiler: `nodeArgs` go before the script (e.g.
 * `--cpu-prof --cpu-prof-dir=DIR`, written when SIGTERM stops the server cleanly), and `wrap` runs the
 * whole command under another one (e.g. `['strace', '-f', '-c', '-o', FILE, '-e', 'trace=fsync,fdatasync']`).
 * Resolves with the URL once the server prints it; rejects with its output if it exits first.
 * `stop()` sends SIGTERM and resolves when the process (and so a profile or strace summary) has ended.
 */
import { type ChildProcess, spawn } from 'node:child_process';

export interface BenchServer {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

export async function startBenchServer(
  data: string,
  admin: string,
  opts: {
    env?: Record<string, string>;
    nodeArgs?: string[];
    wrap?: string[];
    /** where the server's stderr goes: 'ignore' (default) or 'inherit' */
    stderr?: 'ignore' | 'inherit';
    /** the checkout whose `bin/hansard` runs (default this one): an A/B against another build */
    checkout?: string;
  } = {},
): Promise<BenchServer> {
  const cmd = [
    process.execPath,
    ...(opts.nodeArgs ?? []),
    opts.checkout ? `${opts.checkout}/bin/hansard` : 'bin/hansard',
    'serve',
    '--port',
    '0',
    '--data',
    data,
  ];
  const argv = [...(opts.wrap ?? []), ...cmd];
  const proc = spawn(argv[0]!, argv.slice(1), {
    env: { ...process.env, HANSARD_BOOTSTRAP_TOKEN: admin, ...opts.env },
    // The request log (one stderr line a request) is dropped: 30,000 lines a second would fill a terminal.
    stdio: ['ignore', 'pipe', opts.stderr ?? 'ignore'],
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (b: Buffer) => {
      if (out.length > 65536) return;
      out += b.toString();
      const m = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  return {
    url,
    proc,
    stop: async () => {
      // strace passes the signal on to the traced server; the server then exits within its 5 s grace.
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
