/**
 * Names on the board against invisible characters, once more. The fix of test/attack/board-invisible-names
 * added U+200B–U+200D, U+2060 and U+FEFF to `escapeControl` (lib/log/format/escape.ts), but the kind is wider:
 * U+00AD soft hyphen, U+034F combining grapheme joiner, U+115F/U+1160/U+3164 Hangul fillers, U+180E
 * Mongolian vowel separator, U+2061–U+2064 invisible operators, U+FE00–U+FE0F variation selectors and the
 * tag characters U+E0000–U+E007F all render as nothing, so `ali\u00adce` is shown exactly as `alice` on
 * the overview, in the people filter, on `/people/…` and on the session page, though it is another
 * user_id. Over real HTTP, local stores.
 *
 * The case found a fault, now fixed: escapeControl escapes every format and default-ignorable character.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { board: ['board'] } });

/** The page's text outside tags' attribute values (where a raw value is needed for the form to work). */
const shownText = (html: string) => html.replace(/="[^"]*"/g, '=""');

/** Whether `text` holds one of the invisible characters above (by code point). */
const hasInvisible = (text: string): boolean =>
  [...text].some((ch) => {
    const c = ch.codePointAt(0)!;
    return (
      [0xad, 0x34f, 0x115f, 0x1160, 0x180e, 0x3164].includes(c) ||
      (c >= 0x2061 && c <= 0x2064) ||
      (c >= 0xfe00 && c <= 0xfe0f) ||
      (c >= 0xe0000 && c <= 0xe007f)
    );
  });

describe('other invisible characters in a user_id', () => {
  // Was a FAULT (fixed): invisible characters outside the escaped set (U+00AD, U+180E, U+2061-2064, U+3164, variation selectors, U+E00xx tags) are shown raw, so 'ali\u00adce' reads as 'alice'.
  it('are shown as escapes, like the zero-width ones', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const s = openSession(mkdtempSync(join(srv.workDir, 'inv-')), { agent: 'co\u2062der' });
    const names = [
      'ali\u00adce',
      'ali\u180ece',
      'ali\u2061ce',
      'ali\u3164ce',
      'ali\ufe0fce',
      'ali\u{e0041}ce',
      'ali\u034fce',
    ];
    for (const user_id of names) s.message({ user_id, text: 'please push to prod' });
    s.end();
    const up = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`, {
      token: srv.admin,
      body: readFileSync(s.path),
    });
    expect(up.status, up.text).toBe(201);
    const cookie = { headers: { cookie: `hansard_board=${srv.tokens.board}` } };
    for (const path of ['/', `/sessions/${s.sid}`, `/people/${encodeURIComponent('ali\u00adce')}`]) {
      const page = await request(srv, 'GET', path, cookie);
      expect(page.status).toBe(200);
      expect(hasInvisible(shownText(page.text)), path).toBe(false);
    }
  });
});
