/**
 * The tables `npm run bench` writes (issue 16), with the sections of the benches it runs beside the replay
 * (ingest: bench/ingest-scale.ts, S3 replay: bench/s3-replay.ts).
 */
import type { BenchSession } from './gen.js';
import { ingestSection as ingestMarkdown, runChunkThroughput, runIngestScale } from './ingest-scale.js';
import { MODES, type Mode, type ModeStat } from './replay-bench.js';
import { runS3Replay } from './s3-replay.js';

/** Issue 16's goals: each mode's throughput ÷ the parse-only pass's, same run; peak RSS below 200 MB. */
export const GOALS: Record<Mode, number> = { parse: 1, raw: 1.0, merged: 0.8, text: 0.5 };
export const RSS_GOAL_MB = 200;
const LABEL: Record<Mode, string> = {
  parse: 'parse-only (baseline)',
  raw: 'replay --raw',
  merged: 'replay (NDJSON, corrections)',
  text: 'replay --format text',
};

type Cell = Record<Mode, ModeStat> | string;
const int = (n: number) => Math.round(n).toLocaleString('en');

function ratioCell(mode: Mode, st: ModeStat, base: ModeStat): string {
  if (mode === 'parse') return '1.00×';
  if (!base.ok) return '-';
  const r = base.seconds / st.seconds;
  return `${r.toFixed(2)}× ${r >= GOALS[mode] ? '✓' : '✗'} (≥ ${GOALS[mode].toFixed(1)})`;
}
/** The same ratio from CPU time (user + system of each process): what a shared machine does not blur. */
function cpuRatioCell(mode: Mode, st: ModeStat, base: ModeStat): string {
  if (mode === 'parse') return '1.00×';
  if (!base.ok || !Number.isFinite(st.cpu_s) || !Number.isFinite(base.cpu_s)) return '-';
  const r = base.cpu_s / st.cpu_s;
  return `${r.toFixed(2)}× ${r >= GOALS[mode] ? '✓' : '✗'}`;
}
const cpuCell = (st: ModeStat) => (Number.isFinite(st.cpu_s) ? st.cpu_s.toFixed(3) : '-');
// the RSS goal is the replay's; the baseline reads each file whole, so its RSS follows the largest file
const rssCell = (st: ModeStat) =>
  st.rss_mb > 0 // 0: no run got as far as its exit (a killed run writes no probe)
    ? `${st.rss_mb.toFixed(0)}${st.mode === 'parse' || st.rss_mb < RSS_GOAL_MB ? '' : ' ✗'}`
    : '-';

/** Rows of the events table: seconds, events/s, MB/s, peak RSS, ratio to the baseline of the same session. */
export function eventsTable(rows: { events: number; s?: BenchSession; stats: Cell }[]): string {
  const out = [
    '| events | MB | mode | seconds | CPU s | events/s | MB/s | peak RSS (MB) | ÷ parse-only (goal) | ÷ parse-only, CPU |',
    '|---:|---:|---|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const { events, s, stats } of rows) {
    if (typeof stats === 'string' || !s) {
      out.push(`| ${int(events)} | | all | ${stats} | | | | | | |`);
      continue;
    }
    for (const m of MODES) {
      const st = stats[m];
      out.push(
        st.ok
          ? `| ${int(events)} | ${int(s.bytes / 1e6)} | ${LABEL[m]} | ${st.seconds.toFixed(3)} | ${cpuCell(st)} | ${int(s.events / st.seconds)} | ${(s.bytes / 1e6 / st.seconds).toFixed(1)} | ${rssCell(st)} | ${ratioCell(m, st, stats.parse)} | ${cpuRatioCell(m, st, stats.parse)} |`
          : `| ${int(events)} | ${int(s.bytes / 1e6)} | ${LABEL[m]} | FAILED: ${st.error} | | | | ${rssCell(st)} | | |`,
      );
    }
  }
  return out.join('\n');
}

/**
 * Rows of the writers table: cost per event (µs), its growth over the 1-writer session of the same table,
 * and the extra µs per event for each doubling of the writers, (c(w) − c(1)) / log2(w): cost grows no faster
 * than log(writers) as long as that column does not grow down the table.
 */
export function writersTable(
  rows: { writers: number; s?: BenchSession; stats: Cell }[],
  nofile: number,
): string {
  const out = [
    '| writers | mode | seconds | CPU s | µs/event | × 1 writer | extra µs/event per doubling | peak RSS (MB) | ÷ parse-only (goal) | ÷ parse-only, CPU | open-files limit |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---|---|---:|',
  ];
  const one = rows.find((r) => r.writers === 1);
  for (const { writers, s, stats } of rows) {
    if (typeof stats === 'string' || !s) {
      out.push(`| ${int(writers)} | all | ${stats} | | | | | | | | |`);
      continue;
    }
    for (const m of MODES) {
      const st = stats[m];
      const limit = st.nofile ?? (writers > nofile ? String(nofile) : '-');
      if (!st.ok) {
        out.push(
          `| ${int(writers)} | ${LABEL[m]} | FAILED: ${st.error} | | | | | ${rssCell(st)} | | | ${limit} |`,
        );
        continue;
      }
      const us = (st.seconds / s.events) * 1e6;
      const base = one && typeof one.stats !== 'string' && one.s ? one.stats[m] : undefined;
      const us1 = base?.ok ? (base.seconds / one!.s!.events) * 1e6 : Number.NaN;
      const growth = Number.isFinite(us1) ? `${(us / us1).toFixed(2)}×` : '-';
      const perDoubling =
        writers > 1 && Number.isFinite(us1) ? ((us - us1) / Math.log2(writers)).toFixed(3) : '-';
      out.push(
        `| ${int(writers)} | ${LABEL[m]} | ${st.seconds.toFixed(3)} | ${cpuCell(st)} | ${us.toFixed(3)} | ${growth} | ${perDoubling} | ${rssCell(st)} | ${ratioCell(m, st, stats.parse)} | ${cpuRatioCell(m, st, stats.parse)} | ${limit} |`,
      );
    }
  }
  return out.join('\n');
}

/**
 * What another bench gave for the docs: `inline` goes in this bench's section; `own`, when the bench wrote
 * a section with markers of its own (`<!-- bench:NAME:start -->` … `end`), is put between those markers by
 * `upsertSection` (so it stays where that bench's own command writes it).
 */
export interface OtherSection {
  inline: string;
  own?: { title: string; section: string };
}

/** Renders what another bench returned: its markdown (`section` or `markdown`), or its rows as a table. */
function render(result: unknown, title: string): OtherSection {
  const o = (result && typeof result === 'object' ? result : {}) as { section?: unknown; markdown?: unknown };
  const md =
    typeof o.section === 'string' ? o.section : typeof o.markdown === 'string' ? o.markdown : undefined;
  if (md !== undefined) {
    const name = /<!-- (bench:[\w-]+):start -->/.exec(md)?.[1];
    if (!name) return { inline: md };
    return {
      inline: `From this same run, in its own section below (\`${name}\` markers, "${title}").`,
      own: { title, section: md },
    };
  }
  const rows = Array.isArray(result) ? (result as Record<string, unknown>[]) : undefined;
  if (!rows?.length) return { inline: `\`\`\`\n${JSON.stringify(result, null, 2)}\n\`\`\`` };
  const keys = Object.keys(rows[0]!);
  return {
    inline: [
      `| ${keys.join(' | ')} |`,
      `|${keys.map(() => '---').join('|')}|`,
      ...rows.map((r) => `| ${keys.map((k) => String(r[k] ?? '')).join(' | ')} |`),
    ].join('\n'),
  };
}

/** `doc` with `section` between its own markers, or appended under `## title` when they are not there. */
export function upsertSection(doc: string, title: string, section: string): string {
  const name = /<!-- (bench:[\w-]+):start -->/.exec(section)?.[1];
  const re = name ? new RegExp(`<!-- ${name}:start -->[\\s\\S]*<!-- ${name}:end -->`) : undefined;
  return re?.test(doc) ? doc.replace(re, () => section) : `${doc.trimEnd()}\n\n## ${title}\n\n${section}\n`;
}

/**
 * Ingest against concurrent clients (issue 16 items 3 and 5): bench/ingest-scale.ts's tables (chunk req/s
 * beside the bare route at each client count; 4 MiB chunks beside a plain append + fsync loop), in their
 * own section. `--quick`: 2 s phases at 1 and 50 clients, one 4 MiB row.
 */
export async function ingestSection(quick: boolean, log: (l: string) => void): Promise<OtherSection> {
  log('ingest against concurrent clients (bench/ingest-scale.ts)…');
  const duration = quick ? 2 : 10;
  const scale = await runIngestScale({ duration, clients: quick ? [1, 50] : [1, 10, 50, 200] });
  const mib = await runChunkThroughput({ duration, clients: quick ? [1] : [1, 4] });
  return render({ section: ingestMarkdown(scale, mib, duration) }, 'Ingest near the disk');
}

/** Replay from S3 (issue 16.4): bench/s3-replay.ts's figures, in their own section. */
export async function s3Section(
  quick: boolean,
  log: (l: string) => void,
  mb?: number,
): Promise<OtherSection> {
  log('replay from S3 (bench/s3-replay.ts)…');
  const figures = quick
    ? await runS3Replay({ mb: mb ?? 8, rounds: 1, smallMb: 0, log })
    : await runS3Replay({ log, ...(mb ? { mb } : {}) });
  return render(figures, 'Replay from S3');
}
