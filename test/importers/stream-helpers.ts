/**
 * Helpers of the stream importer tests (claude-code-stream.test.ts, codex-exec.test.ts): read a segment
 * back, pick events, run `hansard verify` in-process, write a hand-made stream.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../../lib/client/cli/main.js';
import { decodeEvent, type LogEvent, readSegmentFile } from '../../lib/log/index.js';

export type Ev = LogEvent & Record<string, unknown>;

/** Every event of one segment file, decoded; a segment problem fails the test. */
export async function readBack(path: string): Promise<Ev[]> {
  const events: Ev[] = [];
  for await (const item of readSegmentFile(path)) {
    if (item.kind === 'problem') throw new Error(`segment problem: ${item.problem.message}`);
    events.push(decodeEvent(item.event) as Ev);
  }
  return events;
}

/** Every event of every segment in a session directory, segment by segment. */
export async function readSession(dir: string): Promise<Ev[][]> {
  const files = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  return Promise.all(files.map((f) => readBack(join(dir, f))));
}

export const ofType = (events: Ev[], type: string) => events.filter((e) => e.type === type);
/** A note's `extra.import_kind`, or null. */
export const kindOf = (e: Ev) => ((e.extra ?? {}) as Record<string, unknown>).import_kind ?? null;
/** The notes marked `kind`. */
export const marked = (events: Ev[], kind: string) =>
  ofType(events, 'note').filter((n) => kindOf(n) === kind);

/** `hansard verify DIR --json` in-process: the exit code and the report's summary. */
export async function verify(
  dir: string,
): Promise<{ code: number; summary: { errors: number; warnings: number }; report: unknown }> {
  let out = '';
  const io = {
    stdout: {
      write: (s: string | Uint8Array) => (out += typeof s === 'string' ? s : Buffer.from(s).toString()),
    },
    stderr: { write: (_s: string) => {} },
    env: {},
    cwd: process.cwd(),
  };
  const code = await runCli(['verify', dir, '--json'], io);
  const report = JSON.parse(out);
  return { code, summary: report.summary, report };
}

/** Writes `lines` (objects as JSON, strings as they are) one a line to `dir/name`; returns the path. */
export function writeStream(dir: string, name: string, lines: (object | string)[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`);
  return path;
}
