/**
 * `deferredSessions` (lib/client/capture/inbox.ts): a payload a hook acknowledged but deferred to its session's
 * inbox is backlog until the next hook or the shipper writes it; a line torn by a kill mid-append is not.
 * The kill test drains until there is none (it once stopped early and missed a deferred prompt).
 */
import { appendFileSync, existsSync, mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { drainInboxes } from '../../../lib/client/capture/hook.js';
import { deferredSessions } from '../../../lib/client/capture/inbox.js';
import { tmpDirs } from '../../support/tmp.js';

const dirs = tmpDirs('hansard-deferred-');

describe('deferredSessions', () => {
  it('counts a session whose inbox holds complete lines past what was taken', () => {
    const state = dirs.make();
    expect(deferredSessions(state)).toBe(0);
    const dir = join(state, 'claude-code');
    mkdirSync(dir);
    const inbox = join(dir, 'abc.inbox');
    appendFileSync(inbox, '{"hook_event_name":"UserPromptSubmit"}\n');
    expect(deferredSessions(state)).toBe(1);
    writeFileSync(join(dir, 'abc.json'), JSON.stringify({ inboxOffset: statSync(inbox).size }));
    expect(deferredSessions(state)).toBe(0);
    // A torn last line (a hook killed mid-append) is nothing to write.
    appendFileSync(inbox, '{"hook_event_na');
    expect(deferredSessions(state)).toBe(0);
    // Stragglers in the rotated file past what was read of it.
    writeFileSync(`${inbox}.old`, '{"a":1}\n{"b":2}\n');
    writeFileSync(
      join(dir, 'abc.json'),
      JSON.stringify({ inboxOffset: statSync(inbox).size, inboxOldSize: 8 }),
    );
    expect(deferredSessions(state)).toBe(1);
  });
});

describe('spill files (hook-watchdog.ts) a hook and its supervisor both left', () => {
  it("the shipper's drain removes those older than 10 minutes and keeps a live hook's", async () => {
    const state = dirs.make();
    const dir = join(state, 'claude-code');
    mkdirSync(dir, { recursive: true });
    const old = join(dir, 's1.inbox.4242.spill');
    const fresh = join(dir, 's1.inbox.4343.spill');
    writeFileSync(old, '{"prompt":"secret"}\n');
    writeFileSync(fresh, '{"prompt":"live"}\n');
    const past = new Date(Date.now() - 11 * 60 * 1000);
    utimesSync(old, past, past);
    await drainInboxes(state, { HANSARD_STATE_DIR: state });
    expect(existsSync(old)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
  });
});
