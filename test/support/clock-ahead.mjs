// Preloaded into a real `hansard` process (`NODE_OPTIONS=--import=<this file>`) to run its clock
// CLOCK_AHEAD_MS milliseconds ahead of the machine's: what a process in a container or VM whose clock
// drifted, or under a fake-time tool, sees (issue 25.5). `Date.now()` and `new Date()` move; the
// monotonic clocks (performance.now, timers) do not, as on a real machine whose wall clock is wrong.
const offset = Number(process.env.CLOCK_AHEAD_MS ?? 0);
const RealDate = Date;
class AheadDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + offset);
    else super(...args);
  }
  static now() {
    return RealDate.now() + offset;
  }
}
globalThis.Date = AheadDate;
