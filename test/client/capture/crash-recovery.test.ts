/**
 * A hook that dies between writing its events and saving the mapping state (kill -9 there, issue 11),
 * made deterministic in-process with the `afterWrite` seam throwing at that very point: the next hook
 * goes on in the same session, and deferred payloads already written are not written again. The random
 * kills of kill.test.ts found both.
 */
import { describe, expect, it } from 'vitest';
import { runClaudeHook } from '../../../lib/client/capture/hook.js';
import { appendInbox, inboxPath } from '../../../lib/client/capture/inbox.js';
import { mappingStatePath, readHookFailures } from '../../../lib/client/capture/state-dir.js';
import { tmpDirs } from '../../support/tmp.js';
import { sessionEvents, spoolSessions, verifyDir } from './helpers.js';

const tmp = tmpDirs('hansard-hook-crash-');
const prompt = (text: string) =>
  JSON.stringify({ session_id: 'crash-1', hook_event_name: 'UserPromptSubmit', cwd: '/p', prompt: text });
const crash = () => {
  throw new Error('killed between writing and saving');
};

describe('a hook dying after it wrote, before it saved', () => {
  it('the next hook continues the same session (the new session was saved before its first event)', async () => {
    const state = tmp.make();
    const env = { HANSARD_STATE_DIR: state };
    expect(await runClaudeHook(prompt('first'), { env, selfCommand: null, afterWrite: crash })).toBe('');
    expect(readHookFailures(state).at(-1)).toMatchObject({
      reason: 'internal',
      hook: 'claude-code:UserPromptSubmit',
    });
    await runClaudeHook(prompt('second'), { env, selfCommand: null });
    const dirs = spoolSessions(state);
    expect(dirs).toHaveLength(1);
    expect(
      sessionEvents(dirs[0]!)
        .filter((e) => e.type === 'message')
        .map((e) => e.text),
    ).toEqual(['first', 'second']);
  });

  it('deferred payloads it had written are not written again by the next hook', async () => {
    const state = tmp.make();
    const env = { HANSARD_STATE_DIR: state };
    await runClaudeHook(prompt('opening'), { env, selfCommand: null });
    const inbox = inboxPath(mappingStatePath(state, 'claude-code', 'crash-1'));
    appendInbox(inbox, { ...JSON.parse(prompt('deferred one')), hook_deferred: 'd-1' });
    appendInbox(inbox, { ...JSON.parse(prompt('deferred two')), hook_deferred: 'd-2' });
    await runClaudeHook(prompt('crashing'), { env, selfCommand: null, afterWrite: crash });
    await runClaudeHook(prompt('after'), { env, selfCommand: null });
    const texts = sessionEvents(spoolSessions(state)[0]!)
      .filter((e) => e.type === 'message')
      .map((e) => e.text);
    expect(texts).toEqual(['opening', 'deferred one', 'deferred two', 'crashing', 'after']);
    expect(await verifyDir(spoolSessions(state)[0]!)).toEqual([
      expect.objectContaining({ code: 'segment_open' }),
    ]);
  });
});
