/**
 * `npm run bench` (issue 16): the sessions it generates are real v3 segments with the corrections and
 * quarantined lines it claims, and every mode, run as the bench runs it (its own process, the built CLI),
 * reads every line of a 1,000-event session; a mode that reads less is a failed run, never a fast one.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateBenchSession } from '../../bench/gen.js';
import { benchSession, buildModes, checkRun, expected, MODES, runMode } from '../../bench/replay-bench.js';
import { decodeEvent, parseLine, serializeEvent } from '../../lib/log/format/codec.js';
import { ROOT, useBuiltCli } from '../client/capture/helpers.js';

const cli = useBuiltCli('bench');
let root: string;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hansard-bench-test-'));
  await buildModes();
}, 60_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('generateBenchSession', () => {
  it('writes the events, corrections and quarantined lines it reports, each event as serializeEvent writes it', () => {
    const s = generateBenchSession(root, { events: 1000, writers: 7, correctionShare: 0.05, quarantined: 4 });
    expect(readdirSync(s.dir)).toHaveLength(7);
    let events = 0;
    let bad = 0;
    let notJson = 0;
    const corrections: string[] = [];
    for (const f of readdirSync(s.dir)) {
      const lines = readFileSync(join(s.dir, f), 'utf8').split('\n');
      expect(lines.pop()).toBe('');
      for (const line of lines) {
        const p = parseLine(Buffer.from(line), 1, 0);
        if (!p.ok) {
          bad++;
          try {
            JSON.parse(line);
          } catch {
            notJson++;
          }
          continue;
        }
        events++;
        expect(serializeEvent(decodeEvent(p.event))).toBe(line);
        if (p.event.type === 'correction') corrections.push(line);
      }
    }
    expect({ events, bad, notJson }).toEqual({ events: 1000, bad: 4, notJson: 2 });
    expect(s).toMatchObject({ events: 1000, quarantined: 4, notJson: 2, corrections: corrections.length });
    expect(s.bytes).toBe(readdirSync(s.dir).reduce((n, f) => n + readFileSync(join(s.dir, f)).length, 0));
    // targets on both sides of their correction in merged order
    expect(s.corrections).toBeGreaterThan(4);
    expect(s.targetsAfter).toBeGreaterThan(0);
    expect(s.targetsAfter).toBeLessThan(s.corrections);
  });
});

describe('the replay modes', () => {
  it('each reads every line of a 1,000-event session: counts and corrected events match', async () => {
    const s = generateBenchSession(root, { events: 1000, writers: 5, correctionShare: 0.03 });
    const stats = await benchSession(s, { runs: 1, bin: cli.bin, timeoutS: 60 });
    for (const m of MODES) {
      const counted = stats[m].runs;
      expect(stats[m], `${m}: ${stats[m].error}`).toMatchObject({ ok: true });
      expect(stats[m].seconds).toBeGreaterThan(0);
      expect(stats[m].rss_mb).toBeGreaterThan(10);
      expect(counted).toHaveLength(1);
    }
    // what the counted runs must have seen: every line raw, every event merged, each correction applied
    expect(expected('raw', s)).toEqual({ lines: 1000 + s.quarantined });
    expect(expected('merged', s)).toEqual({ lines: 1000, corrected: s.correctedTargets });
    expect(s.correctedTargets).toBeGreaterThan(0);
    for (const m of ['merged', 'text'] as const) {
      const r = await runMode(m, s.dir, { bin: cli.bin, count: true });
      expect(checkRun(r, s)).toMatchObject({ ok: true, lines: 1000, corrected: s.correctedTargets });
    }
  }, 120_000);

  it('a mode that reads fewer lines than the session holds is a failed run', async () => {
    const s = generateBenchSession(root, { events: 1000, writers: 4 });
    unlinkSync(join(s.dir, readdirSync(s.dir)[0]!)); // a segment the bench's counts still include
    for (const m of ['parse', 'raw'] as const) {
      const r = checkRun(await runMode(m, s.dir, { bin: cli.bin, count: true }), s);
      expect(r.ok).toBe(false);
      expect(r.error).toMatch(/^count mismatch: \d+ lines, 100\d expected/);
    }
  }, 60_000);

  it('runs a mode under the open-files limit it is given', async () => {
    const s = generateBenchSession(root, { events: 200, writers: 2 });
    const r = await runMode('parse', s.dir, { nofile: 64 });
    expect(r).toMatchObject({ ok: true, nofile: '64', lines: 200 + s.quarantined });
  }, 30_000);
});

describe('npm run bench -- --quick', () => {
  it('runs end to end on tiny sessions: both tables, every mode counted, nothing FAILED, docs untouched', async () => {
    const doc = readFileSync(join(ROOT, 'docs/benchmarks.md'), 'utf8');
    const args = ['--quick', '--events', '1000', '--writers', '1,3', '--writers-events', '1000'];
    // the ingest and S3 benches have tests of their own, and search's (which starts a PostgreSQL server)
    // runs in `npm run bench:search`; here the replay tables only
    args.push('--skip', 'ingest,s3,search');
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args, '--bin', cli.bin], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/<!-- bench:merge:start -->[\s\S]*<!-- bench:merge:end -->/);
    expect(r.stdout).not.toContain('FAILED');
    // events table: 1,000 events at 64 writers, the four modes; writers table: 1 and 3 writers
    for (const mode of [
      'parse-only (baseline)',
      'replay --raw',
      'replay (NDJSON, corrections)',
      'replay --format text',
    ]) {
      expect(r.stdout).toContain(`| 1,000 | 0 | ${mode} |`);
      expect(r.stdout).toContain(`| 1 | ${mode} |`);
      expect(r.stdout).toContain(`| 3 | ${mode} |`);
    }
    // CPU time of each process is in the table beside its wall time, and a ratio from it
    expect(r.stdout).toMatch(
      /\| 1,000 \| 0 \| replay --raw \| \d+\.\d{3} \| \d+\.\d{3} \|.*\| \d+\.\d\d× [✓✗] \|$/m,
    );
    // each counted run printed the lines it saw: every line for parse and raw, every event merged
    expect(r.stderr).toMatch(/parse counted: .* 100[3-9] lines/);
    expect(r.stderr).toMatch(/merged counted: .* 1000 lines/);
    expect(readFileSync(join(ROOT, 'docs/benchmarks.md'), 'utf8')).toBe(doc);
  }, 120_000);
});
