/**
 * Zero-width characters (U+200B–U+200D, U+2060, U+FEFF) in ids and names: shown escaped wherever
 * `escapeControl` applies (so `ali\u200bce` is not read as `alice`), and warned about by verify's
 * `control_characters` (docs/verify.md). test/attack/board-invisible-names covers the board pages.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  escapeControl,
  hasControl,
  openSession,
  sessionDirSegments,
  verifySegments,
} from '../../lib/log/index.js';

const ZW = ['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff'];

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hansard-zw-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('zero-width characters', () => {
  it('are escaped as \\uXXXX and detected', () => {
    for (const ch of ZW) {
      const shown = escapeControl(`ali${ch}ce`);
      expect(shown).toBe(`ali\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}ce`);
      expect(hasControl(`a${ch}`)).toBe(true);
    }
    expect(escapeControl('alice 😀 é')).toBe('alice 😀 é');
  });

  it('in a user_id and an agent name are verify warnings (control_characters), escaped in the message', async () => {
    const s = openSession(root, { agent: 'co\u2060der' });
    s.message({ user_id: 'ali\u200bce', text: 'zero\u200bwidth text is free text: no warning' });
    s.end();
    const report = await verifySegments(sessionDirSegments(s.dir));
    const found = report.problems.filter((p) => p.code === 'control_characters');
    expect(found.map((p) => p.message.split(' ')[0]).sort()).toEqual(['meta.agent', 'user_id']);
    expect(found.find((p) => p.message.startsWith('user_id'))!.message).toContain('"ali\\u200bce"');
    expect(report.ok).toBe(true);
  });
});
