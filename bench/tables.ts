/**
 * The tables `npm run bench` writes (issue 16), and the integration points of the benches other files
 * own (ingest: bench/load.ts, S3 replay: bench/s3-replay.ts), each used only when its module exports it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { BenchSession } from './gen.js';
import { MODES, type Mode, type ModeStat } from './replay-bench.js';

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
// the RSS goal is the replay's; the baseline reads each file whole, so its RSS follows the largest file
const rssCell = (st: ModeStat) =>
  st.rss_mb > 0 // 0: no run got as far as its exit (a killed run writes no probe)
    ? `${st.rss_mb.toFixed(0)}${st.mode === 'parse' || st.rss_mb < RSS_GOAL_MB ? '' : ' ✗'}`
    : '-';

/** Rows of the events table: seconds, events/s, MB/s, peak RSS, ratio to the baseline of the same session. */
export function eventsTable(rows: { events: number; s?: BenchSession; stats: Cell }[]): string {
  const out = [
    '| events | MB | mode | seconds | events/s | MB/s | peak RSS (MB) | ÷ parse-only (goal) |',
    '|---:|---:|---|---:|---:|---:|---:|---|',
  ];
  for (const { events, s, stats } of rows) {
    if (typeof stats === 'string' || !s) {
      out.push(`| ${int(events)} | | all | ${stats} | | | | |`);
      continue;
    }
    for (const m of MODES) {
      const st = stats[m];
      out.push(
        st.ok
          ? `| ${int(events)} | ${int(s.bytes / 1e6)} | ${LABEL[m]} | ${st.seconds.toFixed(3)} | ${int(s.events / st.seconds)} | ${(s.bytes / 1e6 / st.seconds).toFixed(1)} | ${rssCell(st)} | ${ratioCell(m, st, stats.parse)} |`
          : `| ${int(events)} | ${int(s.bytes / 1e6)} | ${LABEL[m]} | FAILED: ${st.error} | | | ${rssCell(st)} | |`,
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
    '| writers | mode | seconds | µs/event | × 1 writer | extra µs/event per doubling | peak RSS (MB) | ÷ parse-only (goal) | open-files limit |',
    '|---:|---|---:|---:|---:|---:|---:|---|---:|',
  ];
  const one = rows.find((r) => r.writers === 1);
  for (const { writers, s, stats } of rows) {
    if (typeof stats === 'string' || !s) {
      out.push(`| ${int(writers)} | all | ${stats} | | | | | | |`);
      continue;
    }
    for (const m of MODES) {
      const st = stats[m];
      const limit = st.nofile ?? (writers > nofile ? String(nofile) : '-');
      if (!st.ok) {
        out.push(
          `| ${int(writers)} | ${LABEL[m]} | FAILED: ${st.error} | | | | ${rssCell(st)} | | ${limit} |`,
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
        `| ${int(writers)} | ${LABEL[m]} | ${st.seconds.toFixed(3)} | ${us.toFixed(3)} | ${growth} | ${perDoubling} | ${rssCell(st)} | ${ratioCell(m, st, stats.parse)} | ${limit} |`,
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
 * True when `file` is committed and exports `name` (read from its source, not imported: importing a
 * script-style bench would run it; a file another engineer has not committed yet may be half-written).
 */
function exports(file: string, name: string): boolean {
  if (!existsSync(file)) return false;
  try {
    execFileSync('git', ['ls-files', '--error-unmatch', file], { stdio: 'ignore' });
  } catch {
    return false;
  }
  return new RegExp(`export\\s+(async\\s+)?(function|const)\\s+${name}\\b`).test(readFileSync(file, 'utf8'));
}

/**
 * INTEGRATION POINT (issue 16 item 5, ingest against clients 1 → 200): bench/load.ts's
 * `runIngestScale(opts)`, owned by the group-commit work. Until it is committed, the section says so.
 */
export async function ingestSection(quick: boolean, log: (l: string) => void): Promise<OtherSection> {
  if (!exports('bench/load.ts', 'runIngestScale')) {
    return {
      inline:
        'Not measured in this run: bench/load.ts does not export `runIngestScale` yet (the ingest scale bench of issue 16 item 5 is in progress).',
    };
  }
  log('ingest against concurrent clients (bench/load.ts runIngestScale)…');
  const mod = (await import('./load.js')) as unknown as {
    runIngestScale: (o: unknown) => Promise<unknown>;
  };
  return render(
    await mod.runIngestScale({ clients: quick ? [1, 10] : [1, 10, 50, 200], quick, log }),
    'Ingest against concurrent clients',
  );
}

/** INTEGRATION POINT: bench/s3-replay.ts's `runS3Replay(opts)` (issue 16.4), owned by the S3 replay work. */
export async function s3Section(quick: boolean, log: (l: string) => void): Promise<OtherSection> {
  if (!exports('bench/s3-replay.ts', 'runS3Replay')) {
    return { inline: 'Not measured in this run: bench/s3-replay.ts (`runS3Replay`) is not committed yet.' };
  }
  log('replay from S3 (bench/s3-replay.ts runS3Replay)…');
  const mod = (await import('./s3-replay.js')) as unknown as {
    runS3Replay: (o: unknown) => Promise<unknown>;
  };
  return render(await mod.runS3Replay({ quick, log }), 'Replay from S3');
}
