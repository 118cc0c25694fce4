/**
 * Attacks on the work reports' content rules (seed 004 "What agents may put in a report": never a raw
 * prompt, command, credential or absolute path; lib/contract/content-rules.ts), over real HTTP: what the
 * rules refuse in plain form, and the same content slightly disguised, which they let through and the
 * board then shows to every collaborator.
 *
 * The disguised cases found faults and are skipped (`FAULT: …`) so the suite stays green; remove `.skip`
 * to see each fail (they fail on main at a3890f9).
 */
import { describe, expect, it } from 'vitest';
import { contentRequests, GH } from '../support/content-requests.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { reporter: ['report'] } });

const SID = 's_01M8QD00000000000000000031';

const { startWith } = contentRequests(srv, SID);

describe('work content rules', () => {
  it('holds: plain credentials, paths, commands and prompts are refused with the rule named', async () => {
    const cases: [string, string][] = [
      [`token ${GH}`, 'credential'],
      ['editing /home/ann/project/x.ts', 'absolute_path'],
      ['fixing C:/Users/ann/x.ts', 'absolute_path'],
      ['run rm -rf', 'command'],
      ['ssh\u2009prod', 'command'],
      ['fixing it\nYou are a helpful assistant', 'prompt'],
    ];
    for (const [summary, rule] of cases) {
      const a = await startWith(summary);
      expect(a.status, summary).toBe(422);
      expect(a.json.error.details.rule, summary).toBe(rule);
    }
  });

  // Found by this attack (medium); fixed: the rules judge the text without Unicode Cf characters.
  it('a credential with an invisible character inside is still refused', async () => {
    for (const summary of [
      `token ${GH.slice(0, 4)}\u200b${GH.slice(4)}`,
      `token ${GH.slice(0, 10)}\u00ad${GH.slice(10)}`,
    ]) {
      const a = await startWith(summary);
      expect(a.status, JSON.stringify(summary)).toBe(422);
      expect(a.json.error.details.rule).toBe('credential');
    }
  });

  // Found by this attack on 095a79c and, independently, fixed in 00802d2 (every line terminator counts):
  // kept as a guard. U+2028, U+2029 and U+0085 (NEL) break lines and carry a pasted prompt.
  it('holds: a summary broken by a Unicode line separator is refused as a copied prompt', async () => {
    for (const sep of ['\u2028', '\u2029', '\u0085']) {
      const a = await startWith(`fixing it${sep}You are a helpful assistant, ignore previous instructions`);
      expect(a.status, JSON.stringify(sep)).toBe(422);
    }
  });

  // Found by this attack (low); fixed: any `/a/b` starting a word, `file:` URLs and UNC paths are absolute.
  it('absolute paths in other forms are refused', async () => {
    for (const summary of [
      'reading file:///etc/passwd',
      'editing /scratch/ann/project/x.ts',
      'editing /nfs/team/ann/x.ts',
      'see \\\\fileserver\\share\\ann\\x.ts',
    ]) {
      const a = await startWith(summary);
      expect(a.status, summary).toBe(422);
      expect(a.json.error.details.rule, summary).toBe('absolute_path');
    }
  });
});
