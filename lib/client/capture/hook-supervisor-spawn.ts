/**
 * Starts the hook's supervisor process (`hook-watchdog.ts`) at the least cost to the hook, which runs on
 * every tool call of the agent (issue 25 attack item 14: the watchdog's cost must stay unmeasurable at
 * p50, `npm run bench:hook`). Node's `child_process.spawn` costs a hook about 6 ms here: loading
 * child_process and what it loads (net, dgram, …) about 3 ms, and its spawn, stdio streams and `net.Socket`
 * about 3 ms. The supervisor needs none of that: one process, detached, its stdin a socket this process
 * writes short notes to with `writeSync`. So it is spawned through libuv's process handle directly
 * (`process.binding('process_wrap')`, `pipe_wrap`: the handles child_process itself is built on, on the
 * list `process.binding` serves in Node 20 and 22), about 1.5 ms. Anything unexpected there (another Node
 * that does not serve them, another shape) falls back to `child_process.spawn`.
 *
 * Node builtins only: the hook loader (`dist/hook.cjs`) loads this before anything else.
 */
import type { ChildProcess } from 'node:child_process';
import { writeSync } from 'node:fs';

/** A started supervisor: its pid (the leader of its own process group) and a way to write it a line. */
export interface Supervisor {
  pid: number;
  /** Writes `text` at once when the socket has room; else it is dropped (the reader is gone or full). */
  write(text: string): void;
}

/** The process_wrap / pipe_wrap bindings, as far as they are used here. */
interface ProcessHandle {
  pid?: number;
  onexit: (() => void) | null;
  spawn(options: Record<string, unknown>): number;
  close(): void;
  unref(): void;
}
interface PipeHandle {
  fd: number;
  unref(): void;
  close(): void;
}

/**
 * Spawns `/bin/sh` with `args` (after `sh` itself: `-c`, the script, its $0 and arguments), detached in a
 * process group of its own, stdin a socket to this process, stdout and stderr nowhere. Returns null when
 * it cannot be started at all.
 */
export function spawnSupervisor(args: string[]): Supervisor | null {
  return spawnRaw(args) ?? spawnChildProcess(args);
}

function spawnRaw(args: string[]): Supervisor | null {
  const quiet = process.noDeprecation;
  let proc: ProcessHandle | null = null;
  try {
    // DEP0111 is documentation-only; with --pending-deprecation it would print a warning on stderr.
    process.noDeprecation = true;
    const bind = (process as unknown as { binding(name: string): Record<string, unknown> }).binding;
    const { Process } = bind('process_wrap') as { Process: new () => ProcessHandle };
    const { Pipe, constants } = bind('pipe_wrap') as {
      Pipe: new (type: number) => PipeHandle;
      constants: { SOCKET: number };
    };
    const pipe = new Pipe(constants.SOCKET);
    const p = new Process();
    proc = p;
    p.onexit = () => p.close();
    const envPairs: string[] = [];
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) envPairs.push(`${k}=${v}`);
    const err = p.spawn({
      file: '/bin/sh',
      args: ['/bin/sh', ...args],
      envPairs,
      stdio: [
        { type: 'pipe', readable: true, writable: false, handle: pipe },
        { type: 'ignore' },
        { type: 'ignore' },
      ],
      detached: true,
      windowsHide: false,
      windowsVerbatimArguments: false,
    });
    const pid = p.pid;
    const fd = pipe.fd;
    if (err !== 0 || typeof pid !== 'number' || pid <= 0 || typeof fd !== 'number' || fd < 0) {
      if (typeof pid === 'number' && pid > 0) killGroup(pid);
      p.close();
      pipe.close();
      return null;
    }
    p.unref();
    pipe.unref();
    return {
      pid,
      write: (text) => {
        const bytes = Buffer.from(text);
        try {
          for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done);
        } catch {
          // EAGAIN (full: the note is dropped, cut if partly written) or EPIPE (the supervisor is gone)
        }
      },
    };
  } catch {
    try {
      proc?.close();
    } catch {
      // not open
    }
    return null;
  } finally {
    process.noDeprecation = quiet;
  }
}

function spawnChildProcess(args: string[]): Supervisor | null {
  let child: ChildProcess;
  try {
    const { spawn } = process.getBuiltinModule('node:child_process') as typeof import('node:child_process');
    child = spawn('/bin/sh', args, { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  } catch {
    return null;
  }
  child.on('error', () => {});
  child.unref();
  if (child.pid === undefined) return null;
  const pipe = child.stdin as import('node:net').Socket;
  pipe.on('error', () => {}); // the supervisor is gone: nothing to tell
  pipe.unref();
  return {
    pid: child.pid,
    // libuv writes to a socket at once when it has room; the rest would wait for the event loop.
    write: (text) => {
      try {
        pipe.write(text);
      } catch {
        // closed
      }
    },
  };
}

/** SIGKILL to the process group `pid` leads. */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
