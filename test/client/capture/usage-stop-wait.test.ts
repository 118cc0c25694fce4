/**
 * Stop's bounded wait (issue 27 item 1, lib/client/capture/claude-usage.ts): Claude Code runs the Stop hook
 * before it has always written the turn's last message to the transcript (anthropics/claude-code#15813),
 * so the read goes on for at most `STOP_WAIT_MS` until a text block the payload's `last_assistant_message`
 * ends with has been read. A real transcript file, a second process appending the message late, and the
 * note written through a real writer; then the bound, when the message never comes.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  recordTranscriptUsage,
  STOP_WAIT_MS,
  type UsageOptions,
  type UsageState,
} from '../../../lib/client/capture/claude-usage.js';
import { WriterMapping } from '../../../lib/importers/mapping.js';
import { openSession } from '../../../lib/log/write/writer.js';
import { tmpDirs } from '../../support/tmp.js';
import { fixture } from './helpers.js';

const tmp = tmpDirs('hansard-usage-wait-');
const ASSISTANT = fixture('real/ccl-representative_messages.jsonl')
  .split('\n')
  .map((l) => JSON.parse(l) as Record<string, unknown>)
  .find((r) => r.type === 'assistant')!;

function line(id: string, text: string): string {
  const m = ASSISTANT.message as Record<string, unknown>;
  return `${JSON.stringify({ ...ASSISTANT, message: { ...m, id, content: [{ type: 'text', text }] } })}\n`;
}

function setup() {
  const root = tmp.make();
  const config = join(root, 'claude');
  const path = join(config, 'projects', 'p', 't.jsonl');
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, line('msg_tool', 'Running it.'));
  const w = openSession(join(root, 'spool'), { agent: 'claude-code' });
  const m = new WriterMapping(w, 'user');
  m.prompt('go', {});
  const usage: UsageState = { files: {}, fromStart: true };
  const opts: UsageOptions = {
    env: { CLAUDE_CONFIG_DIR: config },
    deadline: performance.now() + 10_000,
    budget: { bytes: 2 * 1024 * 1024 },
    refused: () => {},
  };
  const notes = () =>
    readdirSync(w.dir)
      .flatMap((f) => readFileSync(join(w.dir, f), 'utf8').split('\n').filter(Boolean))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => e.import_kind === 'token_usage')
      .map((e) => e.message_id);
  const sink = { main: () => m, subagent: () => null };
  return { path, w, m, usage, opts, notes, sink };
}

describe("Stop's wait for its last message", () => {
  it('a message written ~100 ms after the read began is still read, inside the wait', async () => {
    const s = setup();
    const late = join(s.path, '..', 'late.jsonl');
    writeFileSync(late, line('msg_final', 'All done: the command printed its greeting.'));
    // The appender runs already (fork and exec done) when the read begins: it only sleeps, then appends.
    const child = spawn('sh', ['-c', `echo ready; sleep 0.1; cat '${late}' >> '${s.path}'`], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const exited = new Promise((done) => child.on('exit', done));
    await new Promise((ready) => child.stdout.once('data', ready));
    const t0 = performance.now();
    const n = recordTranscriptUsage(
      s.usage,
      { path: s.path, waitFor: 'All done: the command printed its greeting.' },
      s.sink,
      {},
      s.opts,
    );
    const ms = performance.now() - t0;
    await exited;
    s.w.close();
    expect(n).toBe(2);
    expect(s.notes()).toEqual(['msg_tool', 'msg_final']);
    expect(ms).toBeLessThan(STOP_WAIT_MS + 1_000);
  });

  it('a message that never comes: the read ends after the wait, with what was there', () => {
    const s = setup();
    const t0 = performance.now();
    const n = recordTranscriptUsage(s.usage, { path: s.path, waitFor: 'never written' }, s.sink, {}, s.opts);
    const ms = performance.now() - t0;
    s.w.close();
    expect(n).toBe(1);
    expect(ms).toBeGreaterThanOrEqual(STOP_WAIT_MS - 25);
    expect(ms).toBeLessThan(STOP_WAIT_MS + 1_000);
  });

  it('no wait when the message was read at once, nor past the deadline', () => {
    const s = setup();
    let t0 = performance.now();
    recordTranscriptUsage(s.usage, { path: s.path, waitFor: 'Running it.' }, s.sink, {}, s.opts);
    expect(performance.now() - t0).toBeLessThan(STOP_WAIT_MS - 50);
    s.opts.deadline = performance.now() + 50;
    t0 = performance.now();
    recordTranscriptUsage(s.usage, { path: s.path, waitFor: 'never written' }, s.sink, {}, s.opts);
    expect(performance.now() - t0).toBeLessThan(50 + 1_000);
    s.w.close();
  });
});
