/** The streams and environment a command runs with; tests pass their own to run commands in-process. */
export interface Io {
  stdout: {
    write(s: string | Uint8Array): unknown;
    isTTY?: boolean;
    once?(event: 'drain', listener: () => void): unknown;
  };
  stderr: { write(s: string): unknown; isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** set by long-running commands (serve) so the process is not told to exit */
  keepAlive?: boolean;
}

/** Prints a value as one JSON document. */
export function printJson(io: Io, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Writes to stdout and waits for it to drain when its buffer is full, so a long replay streams in bounded memory. */
export async function writeOut(io: Io, chunk: string | Uint8Array): Promise<void> {
  if (io.stdout.write(chunk) === false && io.stdout.once) {
    await new Promise<void>((resolve) => io.stdout.once!('drain', resolve));
  }
}
