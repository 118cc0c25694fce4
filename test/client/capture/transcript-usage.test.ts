/**
 * The transcript reader of the capture hook's token usage (issue 27 item 1,
 * lib/client/capture/transcript-usage.ts) on real files: a file that shrank (the same inode: refused; a
 * new file at the path: read from 0), a line longer than a read (read whole; past the line limit,
 * skipped), a read that begins at the file's end in the middle of a line. The records are shaped as the
 * real ones of test/fixtures/real/ccl-representative_messages.jsonl.
 */
import { appendFileSync, mkdirSync, renameSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  readTranscriptUsage,
  type TranscriptCursor,
  USAGE_LINE_MAX_BYTES,
} from '../../../lib/client/capture/transcript-usage.js';
import { tmpDirs } from '../../support/tmp.js';
import { fixture } from './helpers.js';

const tmp = tmpDirs('hansard-transcript-usage-');
const ASSISTANT = fixture('real/ccl-representative_messages.jsonl')
  .split('\n')
  .map((l) => JSON.parse(l) as Record<string, unknown>)
  .find((r) => r.type === 'assistant')!;

function line(id: string, text = 'ok'): string {
  const m = ASSISTANT.message as Record<string, unknown>;
  return `${JSON.stringify({ ...ASSISTANT, message: { ...m, id, content: [{ type: 'text', text }] } })}\n`;
}

function setup(): { path: string; env: NodeJS.ProcessEnv } {
  const config = join(tmp.make(), 'claude');
  const path = join(config, 'projects', 'p', 't.jsonl');
  mkdirSync(join(path, '..'), { recursive: true });
  return { path, env: { CLAUDE_CONFIG_DIR: config } };
}

function read(path: string, env: NodeJS.ProcessEnv, c?: TranscriptCursor, more = {}) {
  const r = readTranscriptUsage(path, c, { env, ...more });
  if (r.kind !== 'read') throw new Error(`not read: ${JSON.stringify(r)}`);
  return r;
}
const ids = (r: { records: { messageId: string }[] }) => r.records.map((x) => x.messageId);

describe('a transcript that shrank', () => {
  it('the same file cut below the offset read is refused; a new file at the path is read from 0', () => {
    const { path, env } = setup();
    writeFileSync(path, line('msg_1') + line('msg_2'));
    const first = read(path, env);
    expect(ids(first)).toEqual(['msg_1', 'msg_2']);
    truncateSync(path, line('msg_1').length);
    expect(readTranscriptUsage(path, first.cursor, { env })).toEqual({
      kind: 'refused',
      reason: 'it shrank below the offset already read (the same file)',
    });
    const fresh = `${path}.new`;
    writeFileSync(fresh, line('msg_new'));
    renameSync(fresh, path);
    const again = read(path, env, first.cursor);
    expect(ids(again)).toEqual(['msg_new']);
    expect(again.cursor.offset).toBe(line('msg_new').length);
  });
});

describe('long lines', () => {
  it('a line longer than a read is read whole; one past the line limit is skipped, and what follows read', () => {
    const { path, env } = setup();
    const maxBytes = 64 * 1024;
    writeFileSync(path, line('msg_big', 'b'.repeat(200 * 1024)) + line('msg_after'));
    const big = read(path, env, undefined, { maxBytes });
    expect(ids(big)).toEqual(['msg_big']);
    expect(ids(read(path, env, big.cursor, { maxBytes }))).toEqual(['msg_after']);

    const { path: p2, env: e2 } = setup();
    writeFileSync(p2, line('msg_huge', 'h'.repeat(USAGE_LINE_MAX_BYTES + 1024)) + line('msg_next'));
    let r = read(p2, e2, undefined, { maxBytes });
    const seen: string[] = [...ids(r)];
    for (let i = 0; i < 20 && r.more; i++) {
      r = read(p2, e2, r.cursor, { maxBytes: 2 * 1024 * 1024 });
      seen.push(...ids(r));
    }
    expect(seen).toEqual(['msg_next']);
  });
});

describe('a read that begins at the end', () => {
  it('in the middle of a line: the rest of that line is not taken for a record, the next line is', () => {
    const { path, env } = setup();
    const half = line('msg_half');
    writeFileSync(path, line('msg_old') + half.slice(0, 30));
    const start = read(path, env, undefined, { startAtEnd: true });
    expect(start.records).toEqual([]);
    expect(start.cursor.midLine).toBe(true);
    appendFileSync(path, half.slice(30) + line('msg_new'));
    expect(ids(read(path, env, start.cursor))).toEqual(['msg_new']);
  });
});
