/**
 * The built `hansard serve` on loopback for the benchmarks and `npm run screenshots`: a fresh process on
 * `data`, its admin token `admin` (HANSARD_BOOTSTRAP_TOKEN), resolved once it prints the URL it serves.
 * `env` adds variables (e.g. `HANSARD_RATE_LIMIT: '0'`). Rejects with the server's output if it exits
 * first. The caller stops it (`proc.kill('SIGTERM')`).
 */
import { type ChildProcess, spawn } from 'node:child_process';

export async function startServer(
  data: string,
  admin: string,
  env: Record<string, string> = {},
): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, ['bin/hansard', 'serve', '--port', '0', '--data', data], {
    env: { ...process.env, HANSARD_BOOTSTRAP_TOKEN: admin, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  return { url, proc };
}
