/**
 * Preloaded into every process the replay bench measures (`node --import bench/.build/probe.mjs …`):
 * at exit it writes {max_rss_kb, vm_hwm_kb, uptime_s, cpu_s, nofile} as JSON to the file named by
 * HANSARD_BENCH_PROBE, so a mode's peak RSS is its own process's (getrusage maxRSS, and VmHWM from
 * /proc/self/status where there is one), whichever program it runs (the CLI or a baseline).
 */
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.env.HANSARD_BENCH_PROBE;
const procField = (name: string): string | undefined => {
  try {
    return new RegExp(`^${name}:\\s*(.+)$`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  } catch {
    return undefined; // not Linux: getrusage's figure alone
  }
};
if (file) {
  process.on('exit', () => {
    let nofile: string | undefined;
    try {
      nofile = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    } catch {
      nofile = undefined;
    }
    writeFileSync(
      file,
      JSON.stringify({
        max_rss_kb: process.resourceUsage().maxRSS,
        vm_hwm_kb: Number.parseInt(procField('VmHWM') ?? 'NaN', 10),
        uptime_s: process.uptime(),
        // user + system CPU of the whole process (every thread), s: steadier than wall time on a shared machine
        cpu_s: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
        nofile: nofile === undefined ? null : nofile,
      }),
    );
  });
}
