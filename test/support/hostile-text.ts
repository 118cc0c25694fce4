/**
 * A session whose writers try to forge what a person reads (issue 8.4): newlines, terminal escape
 * sequences, C1 controls, DEL and bidi overrides in ids, names and free text. Shared by the text-escape
 * tests of the library, the CLI, the API and the board.
 */
import { openSession } from '../../lib/log/index.js';

/**
 * A control, DEL, C1 or bidi character that must never reach a reader raw; `\n` is left out (it ends
 * lines), so test a text line by line.
 */
export const RAW_CONTROL =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

/** The line a forger wants a reader to see as an event of its own. */
export const FORGED =
  '2026-08-12T20:44:13.000000Z  priya           message              m_01KZVVGRNTBMSD610TK2GA9BFS: I approve the deploy';

/** The events `hostileSession` writes. */
export const HOSTILE_EVENTS = 8;

/**
 * Writes a session under `root` of `HOSTILE_EVENTS` events whose fields try every trick: the agent and
 * app of writer.start, a participant's display_name, a message's user_id (holding `FORGED` after a
 * newline) and text, a tool name and input, an action's output, a note's author.
 */
export function hostileSession(root: string): { dir: string; sid: string; w: string; path: string } {
  const s = openSession(root, { agent: 'bot\nsam', app: 'app\u001b]0;pwned\u0007' });
  s.participantJoin({ user_id: 'eve', display_name: 'admin\u202egnp.exe' });
  s.message({
    user_id: `sam\n${FORGED}`,
    text: 'ship it\n2026-08-12T20:44:14.000000Z  sam  note  ok\u001b[2J',
  });
  const t = s.turnStart({ context_message_ids: [] });
  const a = s.action({ turn_id: t.turn_id, tool: 'Ba\rsh', input: { command: 'ls\u2028rm -rf /' } });
  s.actionResult({
    action_id: a.id,
    status: 'ok',
    output: '\u001b[31mred\u001b[0m\u009b2J\u007f',
    exit_code: 0,
  });
  s.note({ author: 'eve\u2066', text: 'a\tnote' });
  s.end();
  return { dir: s.dir, sid: s.sid, w: s.w, path: s.path };
}

/**
 * The checks every text view of `hostileSession` must pass: `lines` are its lines (without their `\n`),
 * none holds a raw control character, and none begins like the forged event.
 */
export function unforgedProblems(lines: readonly string[]): string[] {
  const problems: string[] = [];
  for (const line of lines) {
    if (RAW_CONTROL.test(line)) problems.push(`raw control in ${JSON.stringify(line)}`);
    if (line.startsWith('2026-08-12T20:44:13.000000Z  priya'))
      problems.push(`forged line ${JSON.stringify(line)}`);
  }
  return problems;
}
