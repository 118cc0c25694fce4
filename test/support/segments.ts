/**
 * Session segments written by the real library writer, for the tests that upload, store or replay them:
 * a small but complete session, its bytes split into lines, and the library's own merged replay of a
 * local session directory to compare a server's answer with.
 */
import { readFileSync } from 'node:fs';
import { newId, openSession, replayLines, sessionDirSegments } from '../../lib/log/index.js';

/** A session segment written by the real writer, and its bytes. */
export interface LocalSegment {
  sid: string;
  w: string;
  /** the session directory */
  dir: string;
  /** the segment file */
  path: string;
  bytes: Buffer;
  /** each line with its `\n` */
  lines: Buffer[];
}

/** Reads a segment file back. */
export function readLocal(seg: Omit<LocalSegment, 'bytes' | 'lines'>): LocalSegment {
  const bytes = readFileSync(seg.path);
  return { ...seg, bytes, lines: splitLines(bytes) };
}

/**
 * Writes a session segment with the library writer under `root`: writer.start, a join, a message, a turn
 * with an action, its result, an output, the turn's end, and (unless `open`) writer.end.
 * @param opts.sid write into this session (a second writer); default a new session
 */
export function writeSession(
  root: string,
  opts: { sid?: string; agent?: string; text?: string; open?: boolean } = {},
): LocalSegment {
  const s = openSession(root, {
    sid: opts.sid ?? newId('s'),
    agent: opts.agent ?? 'test-agent',
    host: 'test-host',
    pid: 4242,
  });
  s.participantJoin({ user_id: 'priya', display_name: 'Priya' });
  const m = s.message({ user_id: 'priya', text: opts.text ?? 'restart the payments worker' });
  const t = s.turnStart({ context_message_ids: [m.id] });
  const a = s.action({ turn_id: t.id, tool: 'bash', input: { cmd: 'systemctl restart payments' } });
  s.actionResult({ action_id: a.id, status: 'ok', output: 'restarted', exit_code: 0 });
  s.output({ turn_id: t.id, text: 'The payments worker is restarted.' });
  s.turnEnd({ turn_id: t.id, status: 'completed' });
  if (opts.open) s.close();
  else s.end({ reason: 'done' });
  return readLocal({ sid: s.sid, w: s.w, dir: s.dir, path: s.path });
}

/** Splits bytes into lines, each keeping its `\n` (a last line without one is kept as it is). */
export function splitLines(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  while (start < bytes.length) {
    const nl = bytes.indexOf(0x0a, start);
    const end = nl === -1 ? bytes.length : nl + 1;
    out.push(bytes.subarray(start, end));
    start = end;
  }
  return out;
}

/** The merged NDJSON (or text) replay the library gives for a local session directory. */
export async function localReplay(dir: string, format: 'ndjson' | 'text' = 'ndjson'): Promise<string> {
  let out = '';
  for await (const line of replayLines(sessionDirSegments(dir), format)) out += line;
  return out;
}
