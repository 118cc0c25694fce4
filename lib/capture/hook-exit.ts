/**
 * Ending the hook's process with a status of our choosing from any thread, without waiting for the
 * others (issue 25 item 1). `process.exit` cannot: from the main thread it first stops and joins every
 * worker thread and then libuv's thread pool, so one thread stuck in a system call (a FIFO's `open`, a
 * hung DNS lookup) keeps the process alive for ever; from a worker thread it ends only that worker.
 *
 * The C library's `exit(status)` can, and Node reaches it through WASI: `proc_exit` of a `WASI` made with
 * `returnOnExit: false` calls it (uvwasi). It runs the atexit handlers and exits every thread at once;
 * measured on Node 20 with the main thread spinning in JavaScript, looping in `mkdirSync`, and blocked in
 * reading a FIFO, the process ended with status 0 each time. What it still waits for is libuv's thread
 * pool (its cleanup runs at exit), so the hook keeps blocking work off that pool.
 *
 * Costs about 10 ms (V8 starts its WebAssembly engine), so the hook's ordinary end is `process.exit`.
 */
/**
 * A WebAssembly module of 96 bytes that imports WASI's `proc_exit` and exports `memory` and `_start`,
 * which calls `proc_exit(status)`; `status` is patched in (one LEB128 byte, 0…63).
 */
function exitModule(status: number): Buffer {
  const name = (s: string) => [s.length, ...Buffer.from(s)];
  const section = (id: number, body: number[]) => [id, body.length, ...body];
  return Buffer.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
    // types: 0 = (i32) -> (), 1 = () -> ()
    ...section(1, [2, 0x60, 1, 0x7f, 0, 0x60, 0, 0]),
    // import wasi_snapshot_preview1.proc_exit as function 0 of type 0
    ...section(2, [1, ...name('wasi_snapshot_preview1'), ...name('proc_exit'), 0x00, 0]),
    ...section(3, [1, 1]), // function 1 has type 1
    ...section(5, [1, 0x00, 1]), // one memory of one page (WASI wants one exported)
    ...section(7, [2, ...name('memory'), 0x02, 0, ...name('_start'), 0x00, 1]),
    // function 1: i32.const status; call 0; end
    ...section(10, [1, 6, 0, 0x41, status & 0x3f, 0x10, 0, 0x0b]),
  ]);
}

/** The part of the WebAssembly global used here. */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => object;
}

/**
 * Calls the C library's `exit(status)` (0…63) from this thread: the process ends without joining its
 * other threads. Returns only if WASI is unavailable or refused (then the caller falls back).
 */
export function libcExit(status: number): void {
  try {
    // Node 20 warns that WASI is experimental, on stderr, which a hook keeps clean.
    const emitWarning = process.emitWarning;
    process.emitWarning = () => {};
    let wasiModule: typeof import('node:wasi');
    try {
      wasiModule = process.getBuiltinModule('node:wasi') as typeof import('node:wasi');
    } finally {
      process.emitWarning = emitWarning;
    }
    const wasi = new wasiModule.WASI({ version: 'preview1', returnOnExit: false });
    // (the project's TypeScript libs do not declare WebAssembly's constructors)
    const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
    wasi.start(new wasm.Instance(new wasm.Module(exitModule(status)), wasi.getImportObject()));
  } catch {
    // no WASI (a Node built without it): the caller falls back
  }
}

/**
 * Where the main thread keeps `() => hardExit(0)` (`Symbol.for(EXIT_KEY)` on globalThis), for the
 * watchdog's thread to run through the inspector (`hook-watchdog-fire.ts`).
 */
export const EXIT_KEY = 'hansard.hook.exit';

/**
 * Ends the process from the main thread with `status`, like `process.exit` (its `exit` listeners run:
 * proper-lockfile releases the locks this process holds), but without waiting for any other thread.
 */
export function hardExit(status: number): never {
  try {
    process.exitCode = status;
    process.emit('exit', status);
  } catch {
    // a listener failed: exit all the same
  }
  libcExit(status);
  process.exit(status);
}
