/**
 * `hansard replay SID|DIR [--raw] [--format text|ndjson]` (DESIGN §6): the merged transcript of a local
 * session directory, or of a session on the server. Both use the same merge, so they print the same bytes.
 * Corrections are applied (a corrected event carries its `corrected` provenance, DESIGN §3); `--raw` gives
 * every line as written instead.
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import { replayChunks, replayRaw, sessionDirSegments } from '../log/replay.js';
import { clientFrom, retryNotice } from './config.js';
import { UsageError } from './errors.js';
import { type Io, writeOut } from './io.js';
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
    .action(
      async (
        target: string,
        o: { format: 'ndjson' | 'text'; raw?: boolean; url?: string; token?: string },
      ) => {
        if (o.raw && o.format === 'text') {
          throw new UsageError('--raw gives the lines exactly as written (NDJSON); leave out --format text');
        }
        const t = sessionTarget(target, io.cwd);
        if (t.kind === 'dir') {
          const segments = sessionDirSegments(t.dir);
          if (segments.length === 0) throw new UsageError(`${target} holds no w_<ULID>.jsonl segments`);
          if (o.raw) for await (const b of replayRaw(segments)) await writeOut(io, b);
          else for await (const l of replayChunks(segments, o.format)) await writeOut(io, l);
          return;
        }
        const query = o.raw ? 'raw=1' : `format=${o.format}`;
        const res = await clientFrom(o, io.env, retryNotice(io)).stream(
          `/v1/sessions/${t.sid}/replay?${query}`,
        );
        if (res.body) for await (const chunk of res.body) await writeOut(io, chunk);
      },
    );
}
