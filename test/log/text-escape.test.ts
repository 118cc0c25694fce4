/**
 * Text output cannot be forged (issue 8.4): a session whose writers put newlines, terminal escape
 * sequences and bidi overrides into ids, names and free text. The text replay (library and
 * `hansard replay DIR --format text`), inspect's text and verify's text stay one line per item with every
 * such character escaped, and verify warns `control_characters` for ids and names.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/client/cli/main.js';
import {
  escapeControl,
  hasControl,
  openSession,
  replayLines,
  sessionDirSegments,
  verifySegments,
} from '../../lib/log/index.js';
import {
  FORGED,
  HOSTILE_EVENTS,
  hostileSession,
  RAW_CONTROL as RAW,
  unforgedProblems,
} from '../support/hostile-text.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hansard-escape-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

async function textReplay(dir: string): Promise<string> {
  let out = '';
  for await (const line of replayLines(sessionDirSegments(dir), 'text')) out += line;
  return out;
}

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const io = {
    stdout: {
      write: (s: string | Uint8Array) => (out += typeof s === 'string' ? s : Buffer.from(s).toString()),
    },
    stderr: { write: (_: string) => {} },
    env: {},
    cwd: root,
  };
  return { code: await runCli(args, io), out };
}

/** Every line of `text` is one item: no raw control character, and no line begins like a forged event. */
function expectUnforged(text: string, items: number): void {
  expect(text.endsWith('\n')).toBe(true);
  const lines = text.slice(0, -1).split('\n');
  expect(lines).toHaveLength(items);
  expect(unforgedProblems(lines)).toEqual([]);
}

describe('escapeControl', () => {
  it('writes C0, DEL, C1, bidi and separator characters as visible escapes and leaves the rest', () => {
    expect(escapeControl('a\nb\rc\td')).toBe('a\\nb\\rc\\td');
    expect(escapeControl('\u0000\u001b[2J\u007f\u0085\u009b')).toBe('\\x00\\x1b[2J\\x7f\\x85\\x9b');
    expect(escapeControl('x\u202ey\u2066\u2069\u200e\u200f\u061c\u2028\u2029')).toBe(
      'x\\u202ey\\u2066\\u2069\\u200e\\u200f\\u061c\\u2028\\u2029',
    );
    for (const ok of ['plain', 'Größe 🚀 日本語', 'עברית', 'C:\\Users\\x', ''])
      expect(escapeControl(ok)).toBe(ok);
    const once = escapeControl('a\n\u202e\u001b');
    expect(escapeControl(once)).toBe(once);
    expect(hasControl('a\u202e')).toBe(true);
    expect(hasControl('a\\n')).toBe(false);
  });
});

describe('the text replay of a hostile session', () => {
  it('gives exactly one line per event with every control escaped, in the library and in `hansard replay --format text`', async () => {
    const { dir } = hostileSession(root);
    const text = await textReplay(dir);
    expectUnforged(text, HOSTILE_EVENTS);
    // what was written is still there to read, escaped
    expect(text).toContain(`sam\\n${FORGED}`.slice(0, 40));
    expect(text).toContain('agent bot\\nsam, app app\\x1b]0;pwned\\x07');
    expect(text).toContain('joins as admin\\u202egnp.exe');
    expect(text).toContain('ship it ⏎ 2026-08-12T20:44:14.000000Z  sam  note  ok\\x1b[2J');
    expect(text).toContain('Ba\\rsh {"command":"ls\\u2028rm -rf /"}');
    expect(text).toContain('\\x1b[31mred\\x1b[0m\\x9b2J\\x7f');
    expect(text).toContain('eve\\u2066');

    const r = await cli(['replay', dir, '--format', 'text']);
    expect(r.code).toBe(0);
    expect(r.out).toBe(text);
  });

  it('escapes the attribution mark’s people and a correction’s reason', async () => {
    const s = openSession(root, { agent: 'bot' });
    const m = s.message({ user_id: 'sam\n2026  priya', text: 'go' });
    const t = s.turnStart({ context_message_ids: null });
    const a = s.action({ turn_id: t.turn_id, tool: 'Bash', input: {} });
    s.correct({ target_id: a.id, field: 'input', value: { x: 1 }, reason: 'typo\nforged\u001b' });
    s.end();
    const text = await textReplay(s.dir);
    expectUnforged(text, 6);
    expect(text).toContain(`[← sam\\n2026  priya ${m.id}: temporal`);
    expect(text).toContain('(typo ⏎ forged\\x1b)');
  });
});

describe('verify and inspect on a hostile session', () => {
  it('verify warns control_characters for each id and name that holds one, not for free text', async () => {
    const { dir } = hostileSession(root);
    const report = await verifySegments(sessionDirSegments(dir));
    const found = report.problems.filter((p) => p.code === 'control_characters');
    const fields = found.map((p) => p.message.split(' ')[0]).sort();
    expect(fields).toEqual(['author', 'display_name', 'meta.agent', 'meta.app', 'tool', 'user_id']);
    for (const p of found) {
      expect(p.severity).toBe('warning');
      expect(p.message).not.toMatch(RAW);
      expect(p.message).not.toContain('\n');
    }
    expect(found.find((p) => p.message.startsWith('user_id'))!.message).toContain('"sam\\n2026-08-12');
    expect(report.ok).toBe(true); // a warning: the log is still as written
  });

  it('`hansard verify` and `hansard inspect` print one line per finding or item, escaped', async () => {
    const { dir } = hostileSession(root);
    const v = await cli(['verify', dir]);
    expect(v.code).toBe(0);
    const findings = v.out.split('\n').filter((l) => l.startsWith('warning'));
    expect(findings).toHaveLength(6);
    expectUnforged(v.out, 7);
    const i = await cli(['inspect', dir]);
    expect(i.code).toBe(0);
    for (const line of i.out.split('\n')) expect(line, JSON.stringify(line)).not.toMatch(RAW);
    expect(i.out).toContain('bot\\nsam (app\\x1b]0;pwned\\x07)');
    expect(i.out).toContain(`participants: eve (0 messages), sam\\n${FORGED.slice(0, 20)}`);
    expect(i.out).toContain('Ba\\rsh 1');
  });
});
