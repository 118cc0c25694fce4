/** `hansard upload DIR…` (DESIGN §6): send session directories to the server, resuming where it stopped. */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { isId } from '../../log/format/ids.js';
import { listSegments } from '../../log/read/session-dir.js';
import { clientFrom, retryNotice } from '../api/config.js';
import { type Io, printJson } from '../api/io.js';
import { type SessionUploadResult, uploadSession } from '../api/upload.js';
import { jsonOption } from './options.js';

export function registerUpload(program: Command, io: Io): void {
  program
    .command('upload')
    .description(
      'upload session directories: sends what the server does not have yet, in chunks of complete lines',
    )
    .argument(
      '<dir...>',
      'session directories (s_<ULID>/ holding w_<ULID>.jsonl segments), or folders of them',
    )
    .option('--url <url>', 'server URL (env HANSARD_URL)')
    .option('--token <token>', 'token with the ingest scope (env HANSARD_TOKEN)')
    .option('--progress', 'print progress even when stderr is not a terminal')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      '\nSafe to run again: only new bytes are sent; a line still being written waits for the next run.',
    )
    .action((dirs: string[], o: UploadOptions) => upload(dirs, o, io));
}

/**
 * A folder that holds session directories (`./sessions`) stands for all of them; anything else is taken
 * as a session directory and checked by `uploadSession`.
 */
function expandSessionDirs(dirs: string[]): string[] {
  return dirs.flatMap((dir) => {
    try {
      if (listSegments(dir).length > 0) return [dir];
      const sessions = readdirSync(dir, { withFileTypes: true })
        .filter((d) => d.isDirectory() && isId('s', d.name))
        .map((d) => join(dir, d.name))
        .sort();
      return sessions.length > 0 ? sessions : [dir];
    } catch {
      return [dir];
    }
  });
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** The options of `hansard upload`, as commander parses them. */
export interface UploadOptions {
  url?: string;
  token?: string;
  json?: boolean;
  progress?: boolean;
}

/**
 * `hansard upload <dirs…>`: sends each session directory's segments to the server (`uploadSession`), with
 * progress on a terminal, and prints what each stored.
 */
export async function upload(dirs: string[], o: UploadOptions, io: Io): Promise<void> {
  const showProgress = !o.json && (o.progress || io.stderr.isTTY === true);
  const client = clientFrom(o, io.env, o.json ? undefined : retryNotice(io));
  const results: SessionUploadResult[] = [];
  for (const dir of expandSessionDirs(dirs.map((d) => resolve(io.cwd, d)))) {
    const r = await uploadSession(dir, {
      client,
      onProgress: showProgress
        ? ({ w, sent, total }) => io.stderr.write(`  ${w}: ${formatBytes(sent)} of ${formatBytes(total)}\n`)
        : undefined,
    });
    results.push(r);
    if (!o.json) {
      const sent = r.segments.reduce((n, s) => n + s.sent_lines, 0);
      const bytes = r.segments.reduce((n, s) => n + s.sent_bytes, 0);
      const pending = r.segments.filter((s) => s.pending_bytes > 0).length;
      io.stdout.write(
        `${r.sid}: ${r.segments.length} writer${r.segments.length === 1 ? '' : 's'}, ${sent} line${sent === 1 ? '' : 's'} sent (${formatBytes(bytes)})` +
          `${sent === 0 ? ', already up to date' : ''}${pending ? `, ${pending} unfinished last line${pending === 1 ? '' : 's'} left for later` : ''}\n`,
      );
    }
  }
  if (o.json) printJson(io, { sessions: results });
  else if (results.some((r) => r.segments.some((seg) => seg.sent_lines > 0))) {
    io.stderr.write(`next: hansard replay ${results[0]!.sid} --format text\n`);
  }
}
