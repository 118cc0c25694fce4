/**
 * The CLI's shortened text keeps whole characters (issue 25.6): `hansard replay DIR --format text` cuts a
 * long line to 240 units with `…`, and `hansard verify DIR` quotes a name holding control or invisible
 * characters in at most 80; neither cut may fall between the two regional indicators of a flag or
 * leave the joiner of a ZWJ emoji without its last part. The real command, in process, on a session
 * written by the library.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../../../lib/log/index.js';
import { runHansard } from '../../support/cli.js';

const FLAG = '\u{1F1EB}\u{1F1F7}'; // 🇫🇷
const CODER = '\u{1F469}\u200D\u{1F4BB}'; // 👩‍💻
const HALF_FLAG = /(?<!\p{RI})\p{RI}(?:\p{RI}\p{RI})*(?!\p{RI})/u;
const BARE_JOINER = /\u200D(?!\p{Extended_Pictographic})/u;

let root = '';
let dir = '';
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'hansard-cut-cli-'));
  const s = openSession(root, { agent: 'bot' });
  // 'u', a zero-width space (verify flags it), 'abc', then flags: verify's 79 units end inside one
  s.message({ user_id: `u\u200babc${FLAG.repeat(30)}`, text: `x${FLAG.repeat(100)}` });
  s.note({ author: 'bot', text: `${'n'.repeat(236)}${CODER} and more` });
  s.end();
  dir = s.dir;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('text the CLI shortens', () => {
  it('hansard replay --format text ends a cut line before a flag or ZWJ emoji it would split', async () => {
    const r = await runHansard(['replay', dir, '--format', 'text'], { cwd: root, env: {} });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`x${FLAG}${FLAG}`);
    expect(r.out).toContain(`${'n'.repeat(236)}…`);
    expect(r.out).not.toMatch(HALF_FLAG);
    expect(r.out).not.toMatch(BARE_JOINER);
  });

  it('hansard verify quotes a long name with whole flags', async () => {
    const r = await runHansard(['verify', dir], { cwd: root, env: {} });
    expect(r.out).toContain('control_characters');
    expect(r.out).toContain(`u\\u200babc${FLAG}`);
    expect(r.out).not.toMatch(HALF_FLAG);
  });
});
