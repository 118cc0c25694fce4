// Preloaded into a real hook process (NODE_OPTIONS=--require) by hook-watchdog.test.ts: makes the hook's
// own thread block for ever at one point of its work, the first time it gets there.
//   TEST_HOOK_BLOCK_AT  'lock': taking the session lock (nothing written yet);
//                       'save': saving the mapping state (the events are written).
//   TEST_HOOK_BLOCK_HOW 'spin': a JavaScript loop; 'fifo': reading TEST_HOOK_BLOCK_FIFO, a FIFO nobody
//                       writes (a system call); 'mkdir': Node's recursive mkdir under /proc (a native loop);
//                       'slow:<ms>': a little work now and then until <ms> after the process started
//                       (a hook that is only slow, starved of CPU); counted from the process's start as
//                       its budget and hard deadline are (performance.now()), not from the lock, which a
//                       loaded machine reaches late.
// Only the main thread is changed: the watchdog's worker runs the same preload and must stay whole.
const fs = require('node:fs');
const { isMainThread } = require('node:worker_threads');

const at = isMainThread ? process.env.TEST_HOOK_BLOCK_AT : undefined;
const how = process.env.TEST_HOOK_BLOCK_HOW;
let blocked = false;

function block() {
  blocked = true;
  if (how.startsWith('slow:')) {
    // Runs a little (5 ms) then waits (20 ms), until <ms> after the process started: progress at a fifth
    // of a CPU, as a hook starved of CPU on a busy machine makes.
    const until = Number(how.slice(5));
    const nap = new Int32Array(new SharedArrayBuffer(4));
    while (performance.now() < until) {
      const run = performance.now() + 5;
      while (performance.now() < run) {}
      Atomics.wait(nap, 0, 0, 20);
    }
    return;
  }
  if (how === 'spin') for (;;) {}
  if (how === 'fifo') fs.readFileSync(process.env.TEST_HOOK_BLOCK_FIFO);
  if (how === 'mkdir') fs.mkdirSync('/proc/hansard-test-block/a/b', { recursive: true });
  throw new Error(`unknown TEST_HOOK_BLOCK_HOW ${how}`);
}

if (at === 'lock') {
  // proper-lockfile makes the lock with fs.mkdir (through graceful-fs, which copies fs when loaded).
  const mkdir = fs.mkdir;
  fs.mkdir = function (path, ...rest) {
    if (!blocked && /[/\\](claude-code|codex)[/\\][^/\\]+\.lock$/.test(String(path))) block();
    return mkdir.call(this, path, ...rest);
  };
}
if (at === 'save') {
  const renameSync = fs.renameSync;
  fs.renameSync = function (from, to) {
    if (!blocked && /[/\\](claude-code|codex)[/\\][^/\\]+\.json$/.test(String(to))) block();
    return renameSync.call(this, from, to);
  };
}
