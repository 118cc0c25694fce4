/**
 * The capture state directory contract (lib/client/capture/state-dir.ts, shared with doctor and integrations
 * sync) and the deferral inbox's rotation (lib/client/capture/inbox.ts), on real files.
 */
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendInbox, ROTATE_BYTES, takeInbox } from '../../../lib/client/capture/inbox.js';
import {
  MAX_HOOK_FAILURES,
  mappingStatePath,
  readCaptureConfig,
  readHookFailures,
  recordHookFailure,
  recordShipped,
  spoolBacklog,
  stateDir,
  writeJsonAtomic,
} from '../../../lib/client/capture/state-dir.js';
import { tmpDirs } from '../../support/tmp.js';

const tmp = tmpDirs('hansard-state-dir-');

describe('stateDir', () => {
  it('HANSARD_STATE_DIR, else $XDG_STATE_HOME/hansard, else ~/.local/state/hansard', () => {
    expect(stateDir({ HANSARD_STATE_DIR: '/s', XDG_STATE_HOME: '/x', HOME: '/h' })).toBe('/s');
    expect(stateDir({ XDG_STATE_HOME: '/x', HOME: '/h' })).toBe('/x/hansard');
    expect(stateDir({ HOME: '/h' })).toBe('/h/.local/state/hansard');
  });
});

describe('readCaptureConfig', () => {
  it('env wins over <state>/config.json, each value on its own; a broken file gives nothing', () => {
    const state = tmp.make();
    expect(readCaptureConfig({}, state)).toEqual({ source: { url: null, token: null } });
    writeJsonAtomic(join(state, 'config.json'), { url: 'http://c', token: 'hns_c' });
    expect(readCaptureConfig({ HANSARD_TOKEN: 'hns_e' }, state)).toEqual({
      url: 'http://c',
      token: 'hns_e',
      source: { url: 'config', token: 'env' },
    });
    writeFileSync(join(state, 'config.json'), '{not json');
    expect(readCaptureConfig({}, state)).toEqual({ source: { url: null, token: null } });
  });
});

describe('mappingStatePath', () => {
  it('keeps an id inside its folder whatever it holds', () => {
    expect(mappingStatePath('/s', 'claude-code', '8bc33bbd-19ac')).toBe('/s/claude-code/8bc33bbd-19ac.json');
    for (const id of ['../../etc/passwd', '..', '.', 'a/b', '']) {
      const p = mappingStatePath('/s', 'codex', id);
      expect(p.startsWith('/s/codex/')).toBe(true);
      expect(p.slice('/s/codex/'.length)).not.toMatch(/\/|^\.\.?\.json$/);
      if (id) expect(decodeURIComponent(p.slice('/s/codex/'.length, -5))).toBe(id);
    }
  });
});

describe('hook-failures.json', () => {
  it('appends newest last, caps at 500, and keeps the message short', () => {
    const state = tmp.make();
    for (let i = 0; i < MAX_HOOK_FAILURES + 5; i++)
      recordHookFailure(state, {
        hook: 'claude-code:PreToolUse',
        reason: 'timeout',
        message: `m${i}`,
        ms: i,
      });
    recordHookFailure(state, { hook: 'shipper', reason: 'internal', message: 'x'.repeat(1000), ms: 1 });
    const f = readHookFailures(state);
    expect(f).toHaveLength(MAX_HOOK_FAILURES);
    expect(f[0]!.message).toBe('m6');
    expect(f.at(-1)!.message).toHaveLength(300);
    expect(Number.isNaN(Date.parse(f.at(-1)!.at))).toBe(false);
  });

  it('an unwritable state directory records nothing and does not throw', () => {
    const dir = tmp.make();
    writeFileSync(join(dir, 'file'), '');
    expect(
      recordHookFailure(join(dir, 'file', 'state'), { hook: 'x', reason: 'internal', message: 'm', ms: 0 }),
    ).toBe(false);
  });
});

describe('spoolBacklog', () => {
  it('counts the bytes and complete lines past what shipped.json says the server acknowledged', () => {
    const state = tmp.make();
    const sid = 's_01KZVVGRNR3D5V708Z4NPGG11H';
    const w = 'w_01KZVVGRNRKM87Z6X6TXYQR7EX';
    mkdirSync(join(state, 'spool', sid), { recursive: true });
    appendFileSync(join(state, 'spool', sid, `${w}.jsonl`), '{"a":1}\n{"b":2}\n{"c":3}\n');
    expect(spoolBacklog(state)).toEqual([{ sid, dir: join(state, 'spool', sid), bytes: 24, events: 3 }]);
    recordShipped(state, sid, [{ w, length: 16 }]);
    expect(spoolBacklog(state)).toEqual([{ sid, dir: join(state, 'spool', sid), bytes: 8, events: 1 }]);
    recordShipped(state, sid, [{ w, length: 8 }]); // never lowers
    recordShipped(state, sid, [{ w, length: 24 }]);
    expect(spoolBacklog(state)).toEqual([]);
    expect(spoolBacklog(join(state, 'absent'))).toEqual([]);
  });
});

describe('the deferral inbox', () => {
  it('gives each payload once, across a rotation, stragglers of the old file included', () => {
    const dir = tmp.make();
    const inbox = join(dir, 'x.inbox');
    const progress = {};
    const big = 'p'.repeat(ROTATE_BYTES / 4);
    for (let i = 0; i < 5; i++) appendInbox(inbox, { i, big });
    expect(takeInbox(inbox, progress).map((p) => (p as { i: number }).i)).toEqual([0, 1, 2, 3, 4]);
    // Taken past ROTATE_BYTES: rotated to .old; an append that raced the rename lands in the old file.
    expect(existsSync(`${inbox}.old`)).toBe(true);
    appendInbox(`${inbox}.old`, { i: 5 });
    appendInbox(inbox, { i: 6 });
    expect(takeInbox(inbox, progress).map((p) => (p as { i: number }).i)).toEqual([6]);
    for (let i = 7; i < 12; i++) appendInbox(inbox, { i, big });
    expect(takeInbox(inbox, progress).map((p) => (p as { i: number }).i)).toEqual([7, 8, 9, 10, 11, 5]);
    expect(takeInbox(inbox, progress)).toEqual([]);
  });
});
