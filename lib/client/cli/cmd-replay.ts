/**
 * `hansard replay SID|DIR [--raw] [--format text|ndjson]` (DESIGN §6): the merged transcript of a local
 * session directory, or of a session on the server. Both use the same merge, so they print the same bytes.
 * Corrections are applied (a corrected event carries its `corrected` provenance, DESIGN §3); `--raw` gives
 * every line as written instead. A large session on AWS is merged into a stored copy first (issue 17.2):
 * the command waits for it, saying so on stderr, and prints the copy's bytes, the same bytes.
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import { sessionDirFileSegments } from '../../log/read/segment-blocks.js';
import { replayBytes } from '../../log/replay/replay.js';
import { clientFrom, retryNotice } from '../api/config.js';
import { FailureError, UsageError } from '../api/errors.js';
import { type Io, writeOut } from '../api/io.js';
import { sessionTarget } from './session-target.js';

export function registerReplay(program: Command, io: Io): void {
  program
    .command('replay')
    .description('print a session merged into one ordered transcript')
    .argument('<session>', 'a session directory, or a session id (s_…) to read from the server')
    .addOption(new Option('--format <format>', 'output format').choices(['ndjson', 'text']).default('ndjson'))
    .option('--raw', 'every line as written (corrections not applied), quarantined ones included')
    .option('--url <url>', 'server URL (env HANSARD_URL)')
    .option('--token <token>', 'token with the read scope (env HANSARD_TOKEN)')
    .action((target: string, o: ReplayOptions) => replay(target, o, io));
}

/**
 * Writes the replay's body to stdout as it comes. A transfer the server breaks off (a segment cut while
 * it streams: the server ends it without its last chunk rather than send a short replay as whole) is
 * said as such, with how much came, never as an unexpected error.
 * @throws FailureError when the body stops before its end
 */
async function copyReplay(io: Io, body: ReadableStream<Uint8Array>, sid: string): Promise<void> {
  const reader = body.getReader();
  let got = 0;
  for (;;) {
    let next: Awaited<ReturnType<typeof reader.read>>;
    try {
      next = await reader.read();
    } catch (err) {
      const cause = (err as { cause?: { message?: unknown } }).cause?.message;
      const why = [err instanceof Error ? err.message : String(err), typeof cause === 'string' ? cause : null]
        .filter(Boolean)
        .join(': ');
      throw new FailureError(
        `the server stopped sending the replay of ${sid} after ${got} bytes: ${why}. What was printed is ` +
          `incomplete: check the session with hansard verify ${sid}, or ask the server's operator (the ` +
          "server's log says why; see docs/operations.md in the hansard repository)",
      );
    }
    if (next.done) return;
    got += next.value.length;
    await writeOut(io, next.value);
  }
}

/** The options of `hansard replay`, as commander parses them. */
export interface ReplayOptions {
  format: 'ndjson' | 'text';
  raw?: boolean;
  url?: string;
  token?: string;
}

/**
 * `hansard replay <target>`: a session's merged lines on stdout, from a local session directory or the
 * server, as NDJSON (`--raw`: exactly as written) or text.
 * @throws UsageError for `--raw` with `--format text`, or a directory without segments
 */
export async function replay(target: string, o: ReplayOptions, io: Io): Promise<void> {
  if (o.raw && o.format === 'text') {
    throw new UsageError('--raw gives the lines exactly as written (NDJSON); leave out --format text');
  }
  const t = sessionTarget(target, io.cwd);
  if (t.kind === 'dir') {
    // FileSegments: the merge reads them by position, in blocks, at most 128 open at once.
    const segments = sessionDirFileSegments(t.dir);
    if (segments.length === 0) throw new UsageError(`${target} holds no w_<ULID>.jsonl segments`);
    // The fast merge's buffers as they come (1 MiB each), each written with backpressure.
    for await (const b of replayBytes(segments, o.raw ? 'raw' : o.format)) await writeOut(io, b);
    return;
  }
  const query = o.raw ? 'raw=1' : `format=${o.format}`;
  // A large session on AWS: the server merges a stored copy first (202), then hands out its URL.
  const res = await clientFrom(o, io.env, retryNotice(io)).stream(`/v1/sessions/${t.sid}/replay?${query}`, {
    onWait: ({ waitedMs, retryAfterMs }) =>
      io.stderr.write(
        `hansard: the server is merging the replay of ${t.sid} (a large session)${waitedMs >= 1000 ? `, ${Math.round(waitedMs / 1000)} s so far` : ''}; asking again in ${Math.round(retryAfterMs / 1000)} s\n`,
      ),
  });
  if (res.body) await copyReplay(io, res.body, t.sid);
}
